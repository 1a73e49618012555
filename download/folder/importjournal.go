package folder

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/quak-photos/quak/download/durable"
)

// importLock, in an import's journal folder, is held by the import using it.
const importLock = "lock"

// journalLockedError reports another import holding a journal; it is an
// ErrLocked.
type journalLockedError struct{}

func (journalLockedError) Error() string        { return "another quak import into this account is running" }
func (journalLockedError) Is(target error) bool { return target == ErrLocked }

// OpenJournal opens (making it, mode 0700) the journal kept in dir for
// imports into the account userID on the server at endpoint, and takes its
// lock until unlock is called: an ErrLocked while another run holds it. A
// dir that holds another account's journal is refused. Unlike a restore's,
// an import's journal lives beside quak's configuration, not beside what
// is imported: a Takeout is read-only, and may be on a disk that comes and
// goes.
func OpenJournal(dir, endpoint string, userID int64) (j *Journal, unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("opening the import journal: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, nil, fmt.Errorf("opening the import journal: %s is a symbolic link or not a folder, which quak never follows", dir)
	}
	unlock, err = durable.TryLock(filepath.Join(dir, importLock))
	if errors.Is(err, durable.ErrHeld) {
		return nil, nil, journalLockedError{}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("opening the import journal: %w", err)
	}
	j = &Journal{dir: dir}
	target := struct {
		Endpoint string `json:"endpoint"`
		UserID   int64  `json:"userID"`
	}{strings.TrimRight(endpoint, "/"), userID}
	var was struct {
		Endpoint string `json:"endpoint"`
		UserID   int64  `json:"userID"`
	}
	if ok, err := j.get("target.json", &was); err != nil || ok && was != target {
		unlock()
		if err == nil {
			err = fmt.Errorf("%s is the journal of another account (%d on %s)", dir, was.UserID, was.Endpoint)
		}
		return nil, nil, fmt.Errorf("opening the import journal: %w", err)
	}
	if err := j.put("target.json", target); err != nil {
		unlock()
		return nil, nil, fmt.Errorf("opening the import journal: %w", err)
	}
	return j, unlock, nil
}

// seenRecord is what a journal keeps of a content it read: its key in the
// source (a zip entry's size and CRC-32) and Ente's hash of it.
type seenRecord struct {
	Key  string `json:"key"`
	Hash string `json:"hash"`
}

// Seen returns the hash recorded for the source content key, or "".
func (j *Journal) Seen(key string) (string, error) {
	var s seenRecord
	ok, err := j.get(seenName(key), &s)
	if !ok || s.Key != key {
		return "", err
	}
	return s.Hash, nil
}

// PutSeen records the hash of the content key names, so that a later run
// knows it without reading it. It is not synced: a record lost to a crash
// only costs that read.
func (j *Journal) PutSeen(key, hash string) error {
	b, err := json.Marshal(seenRecord{Key: key, Hash: hash})
	if err != nil {
		return err
	}
	return durable.WriteFile(j.dir, filepath.Join(j.dir, seenName(key)), b, 0o600)
}

func seenName(key string) string {
	sum := sha256.Sum256([]byte(key))
	return "seen-" + hex.EncodeToString(sum[:16]) + ".json"
}
