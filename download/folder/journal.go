package folder

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/download/durable"
)

// restoreDir, in StateDir, holds one journal per target account and
// server that this folder was restored into.
const restoreDir = "restore"

// Journal is a restore's memory of what it sent into one target account:
// for each original, its intent (the file key, the objects and the whole
// POST /files body) written before anything of it is sent, and for each
// album, the POST /collections body and the id it got. A retry, in the run
// or after a crash, resends what the journal holds and never encrypts
// anew: museum makes a second file of every fresh encryption (UP.5). Each
// record is one file, replaced atomically and synced before the call it
// describes is made. A Journal is safe for concurrent use on distinct
// records.
type Journal struct {
	dir string
}

// Intent is what a restore decided to send for one original, and how far
// it got. Source names the original (its file id in the backup); Album is
// the target album the commit goes into, Cursor that album's updationTime
// read before the first commit was sent (0 until then), FileID the target
// file once the commit is confirmed, Added the other target albums it was
// added to. Src is what the source's parts were (size and modification
// time) when they were encrypted: a part that is no longer so makes other
// bytes than the ones the objects were minted for.
type Intent struct {
	Source   int64           `json:"source"`
	Hash     string          `json:"hash"`
	FileType int             `json:"fileType"`
	Title    string          `json:"title"`
	FileKey  apiclient.B64   `json:"fileKey"`
	File     Object          `json:"file"`
	Thumb    Object          `json:"thumbnail"`
	Body     json.RawMessage `json:"body"`
	Album    int64           `json:"album"`
	Cursor   int64           `json:"cursor"`
	FileID   int64           `json:"fileID,omitempty"`
	Added    []int64         `json:"added,omitempty"`
	Src      []SourceStat    `json:"src,omitempty"`
}

// SourceStat is a source file as a restore read it: its size and its
// modification time (ns since the epoch).
type SourceStat struct {
	Size  int64 `json:"size"`
	MTime int64 `json:"mtime"`
}

// Object is one encrypted object of an intent: its header (the ciphertext
// is made again from it and the file key, byte for byte, unless Data holds
// it: a thumbnail), size and MD5, the key and URL it was given, and its
// parts when sent in parts.
type Object struct {
	Header    apiclient.B64 `json:"header"`
	Data      apiclient.B64 `json:"data,omitempty"`
	Size      int64         `json:"size"`
	MD5       apiclient.B64 `json:"md5"`
	ObjectKey string        `json:"objectKey"`
	URL       string        `json:"url,omitempty"`
	Parts     *Parts        `json:"parts,omitempty"`
	// Sent: the bytes are in the store (a PUT answered, or a multipart
	// upload completed or its answer lost).
	Sent bool `json:"sent,omitempty"`
}

// Parts is an object sent in parts: each part's URL and MD5, the ETag of
// each part sent so far ("" for the others), and the URL that completes it.
type Parts struct {
	Length      int64           `json:"length"`
	URLs        []string        `json:"urls"`
	MD5s        []apiclient.B64 `json:"md5s"`
	ETags       []string        `json:"etags"`
	CompleteURL string          `json:"completeURL"`
}

// AlbumIntent is an album a restore creates, or found: the source album,
// the POST /collections body sent (empty for an album found in the
// target), and the target album's id once known.
type AlbumIntent struct {
	Source int64           `json:"source"`
	Body   json.RawMessage `json:"body,omitempty"`
	ID     int64           `json:"id,omitempty"`
}

// Journal opens (creating it) the journal of restores of this folder into
// the account userID on the server at endpoint. DIR/.quak must exist.
func (f *Folder) Journal(endpoint string, userID int64) (*Journal, error) {
	j, err := openJournal(f.path(restoreDir, journalKey(endpoint, userID)), f.Shown)
	if err != nil {
		return nil, err
	}
	return j, j.describe(journalTarget{Endpoint: endpoint, UserID: userID})
}

// ExistingJournal is the journal of restores of this folder into the
// account, opened only to read, or nil when there is none.
func (f *Folder) ExistingJournal(endpoint string, userID int64) (*Journal, error) {
	return existingJournal(f.path(restoreDir, journalKey(endpoint, userID)), f.Shown)
}

// JournalStore is a folder of restore journals kept outside the folders
// restored from: one per source and target account, so that a source that
// cannot be written (a snapshot, a read-only mount, a copy on someone
// else's disk) keeps its journal here and the next restore of the same
// source into the same account finds it again, wherever the source is
// mounted then. Source is the caller's name for what is restored: stable
// across copies and mounts of it (a backup's account, say), and never a
// secret (it is written in the journal, for people).
type JournalStore struct {
	Root string
}

// Open opens (creating it) the journal of source's restores into the
// account userID on the server at endpoint.
func (s JournalStore) Open(source, endpoint string, userID int64) (*Journal, error) {
	if err := os.MkdirAll(s.Root, 0o700); err != nil {
		return nil, fmt.Errorf("opening the restore journal: %w", err)
	}
	j, err := openJournal(s.dir(source, endpoint, userID), s.Root)
	if err != nil {
		return nil, err
	}
	return j, j.describe(journalTarget{Source: source, Endpoint: endpoint, UserID: userID})
}

// Existing is that journal opened only to read, or nil when there is none.
func (s JournalStore) Existing(source, endpoint string, userID int64) (*Journal, error) {
	return existingJournal(s.dir(source, endpoint, userID), s.Root)
}

func (s JournalStore) dir(source, endpoint string, userID int64) string {
	sum := sha256.Sum256([]byte(source))
	return filepath.Join(s.Root, hex.EncodeToString(sum[:8])+"-"+journalKey(endpoint, userID))
}

// journalKey names a target account: its server (however spelt) and id.
func journalKey(endpoint string, userID int64) string {
	sum := sha256.Sum256([]byte(strings.TrimRight(endpoint, "/") + "\x00" + strconv.FormatInt(userID, 10)))
	return hex.EncodeToString(sum[:8])
}

// journalTarget is what a journal's target.json says it is for.
type journalTarget struct {
	Source   string `json:"source,omitempty"`
	Endpoint string `json:"endpoint"`
	UserID   int64  `json:"userID"`
}

// openJournal makes the journal folder dir (shown names where it is, for
// messages) unless it exists.
func openJournal(dir, shown string) (*Journal, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening the restore journal: %w", err)
	}
	return existingJournal(dir, shown)
}

// existingJournal is the journal in dir, or nil when dir does not exist.
func existingJournal(dir, shown string) (*Journal, error) {
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("opening the restore journal: %w", err)
	case !fi.IsDir():
		return nil, &DirError{Dir: shown, Reason: "has its restore journal's folder as a symbolic link or not a folder, which quak never follows", Kind: DirLink}
	}
	return &Journal{dir: dir}, nil
}

// describe writes what the journal is for, for people who look.
func (j *Journal) describe(t journalTarget) error {
	if err := j.put("target.json", t); err != nil {
		return fmt.Errorf("opening the restore journal: %w", err)
	}
	return nil
}

// Dir is the journal's folder.
func (j *Journal) Dir() string { return j.dir }

// Lock takes the journal's own lock, held by one restore at a time, or
// fails with ErrLocked: two restores of copies of one source into one
// account keep apart by it when their sources cannot be written.
func (j *Journal) Lock() (unlock func(), err error) {
	unlock, err = durable.TryLock(filepath.Join(j.dir, lockFile))
	if errors.Is(err, durable.ErrHeld) {
		return nil, ErrLocked
	}
	return unlock, err
}

// Temp is a folder of the journal's for a restore's temp files, made if
// missing: for a source that cannot be written.
func (j *Journal) Temp() (string, error) {
	dir := filepath.Join(j.dir, tempDir)
	return dir, os.MkdirAll(dir, 0o700)
}

// Empty reports whether the journal holds no record of a file or an album.
func (j *Journal) Empty() (bool, error) {
	names, err := j.records()
	return len(names) == 0, err
}

// records are the names of the journal's records of files and albums.
func (j *Journal) records() ([]string, error) {
	entries, err := os.ReadDir(j.dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if (strings.HasPrefix(n, "file-") || strings.HasPrefix(n, "album-")) && strings.HasSuffix(n, ".json") {
			names = append(names, n)
		}
	}
	return names, nil
}

// SeedFrom copies into j each record of from that j lacks: the journal a
// restore kept in a folder that has since become read-only goes on in a
// store without losing what it sent.
func (j *Journal) SeedFrom(from *Journal) error {
	names, err := from.records()
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(j.dir, n)); err == nil {
			continue
		}
		var raw json.RawMessage
		ok, err := from.get(n, &raw)
		if err != nil {
			return err
		}
		if ok {
			if err := j.put(n, raw); err != nil {
				return err
			}
		}
	}
	return nil
}

// Intent returns the intent recorded for the original source, or nil.
func (j *Journal) Intent(source int64) (*Intent, error) {
	var in Intent
	ok, err := j.get(intentName(source), &in)
	if !ok {
		return nil, err
	}
	return &in, nil
}

// PutIntent records in durably, replacing what was recorded for its
// original: when it returns nil, a crash no longer loses it.
func (j *Journal) PutIntent(in *Intent) error { return j.put(intentName(in.Source), in) }

// Album returns what is recorded of the source album, or nil.
func (j *Journal) Album(source int64) (*AlbumIntent, error) {
	var a AlbumIntent
	ok, err := j.get(albumName(source), &a)
	if !ok {
		return nil, err
	}
	return &a, nil
}

// DropIntent removes the record of the original source: what it sent is
// not to be resent (its source changed, or the target lost its file).
func (j *Journal) DropIntent(source int64) error {
	err := os.Remove(filepath.Join(j.dir, intentName(source)))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return durable.SyncDir(j.dir)
}

// PutAlbum records a durably.
func (j *Journal) PutAlbum(a *AlbumIntent) error { return j.put(albumName(a.Source), a) }

func intentName(source int64) string { return "file-" + strconv.FormatInt(source, 10) + ".json" }
func albumName(source int64) string  { return "album-" + strconv.FormatInt(source, 10) + ".json" }

func (j *Journal) put(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return durable.WriteFileSynced(j.dir, filepath.Join(j.dir, name), b, 0o600)
}

// get reads name into v: false and no error when there is no such record.
func (j *Journal) get(name string, v any) (bool, error) {
	path := filepath.Join(j.dir, name)
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("restore journal %s: not a plain file", name)
	}
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("restore journal %s: %w", name, err)
	}
	return true, nil
}
