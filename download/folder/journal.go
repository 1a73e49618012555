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
// added to.
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
	sum := sha256.Sum256([]byte(strings.TrimRight(endpoint, "/") + "\x00" + strconv.FormatInt(userID, 10)))
	dir := f.path(restoreDir, hex.EncodeToString(sum[:8]))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("opening the restore journal: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return nil, &DirError{Dir: f.Shown, Reason: "has its restore journal's folder as a symbolic link or not a folder, which quak never follows", Kind: DirLink}
	}
	j := &Journal{dir: dir}
	target := struct {
		Endpoint string `json:"endpoint"`
		UserID   int64  `json:"userID"`
	}{endpoint, userID}
	if err := j.put("target.json", target); err != nil {
		return nil, fmt.Errorf("opening the restore journal: %w", err)
	}
	return j, nil
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
