// Package state keeps what a backup folder holds and how far each album has
// been synced, in DIR/.quak/state.db (bbolt: one writer, transactions). A
// page of files and its album's cursor are written in one transaction, so a
// crash at any moment loses nothing and the next run resumes.
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/quak-photos/quak/apiclient"
)

var (
	bucketMeta        = []byte("meta")
	bucketCollections = []byte("collections")
	bucketFiles       = []byte("files")
	bucketVerified    = []byte("verified") // file id → when quak verify last checked it (unix seconds)
	bucketResume      = []byte("resume")   // file id → where an interrupted large download can be taken up
	keyAccount        = []byte("account")
	keyVersion        = []byte("version")
	// keyRecords counts the records in bucketFiles, so that a pass over
	// the briefs alone can tell when one is missing.
	keyRecords = []byte("records")
)

// schemaVersion 2 keeps a brief of each record (bucketBriefs); a state of
// version 1 is given its briefs when a backup first opens it. A quak that
// reads version 1 only refuses version 2, whose briefs it would not keep.
const schemaVersion = 2

var errCorruptBrief = errors.New("state: a file's brief is damaged")

func versionText(v int) string { return fmt.Sprint(v) }

// readable reports whether this quak reads a state of version v.
func readable(v []byte) bool { return string(v) == "1" || string(v) == versionText(schemaVersion) }

// ErrBusy reports that another process has the state open.
var ErrBusy = errors.New("state is in use by another quak")

// Store is an open state database.
type Store struct {
	db *bolt.DB
}

// Open opens (creating if needed) the state at path. The backup's own lock
// keeps runs apart; bbolt's file lock is a backstop that fails at once.
func Open(path string) (*Store, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	current := false
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketMeta, bucketCollections, bucketFiles, bucketVerified, bucketResume} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		v := tx.Bucket(bucketMeta).Get(keyVersion)
		if v != nil && !readable(v) {
			return fmt.Errorf("state schema version %s, this quak reads %d", v, schemaVersion)
		}
		// Without its briefs (a bucket lost to damage) the state is
		// briefed again, as one of an older quak is.
		current = string(v) == versionText(schemaVersion) && tx.Bucket(bucketBriefs) != nil
		if tx.Bucket(bucketMeta).Get(keyRecords) == nil {
			// A new state, or one of a quak that kept no count.
			return setRecords(tx, countKeys(tx, bucketFiles))
		}
		return nil
	})
	if err == nil && !current {
		// A new state, or one of an older quak: brief every record, then
		// say so. A crash before that starts the briefs again.
		err = fillBriefs(db)
		if err == nil {
			err = db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketMeta).Put(keyVersion, []byte(versionText(schemaVersion)))
			})
		}
	}
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &Store{db: db}, nil
}

// OpenReadOnly opens an existing state for reading (quak status, verify
// and the thumbnail helper's --from). It fails with ErrBusy while a backup
// holds the state.
func OpenReadOnly(path string) (*Store, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Millisecond})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, err
	}
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil || tx.Bucket(bucketFiles) == nil || tx.Bucket(bucketCollections) == nil {
			return fmt.Errorf("%s is not a quak state database", path)
		}
		if v := meta.Get(keyVersion); !readable(v) {
			return fmt.Errorf("state schema version %s, this quak reads %d", v, schemaVersion)
		}
		return nil
	})
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Account is the Ente account a backup folder belongs to.
type Account struct {
	UserID   int64  `json:"userID"`
	Email    string `json:"email"`
	Endpoint string `json:"endpoint"`
}

// Account returns the folder's account, or nil for a new folder.
func (s *Store) Account() (*Account, error) {
	var a *Account
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyAccount)
		if v == nil {
			return nil
		}
		a = &Account{}
		return json.Unmarshal(v, a)
	})
	return a, err
}

// SetAccount records the folder's account.
func (s *Store) SetAccount(a Account) error {
	return s.db.Update(func(tx *bolt.Tx) error { return put(tx.Bucket(bucketMeta), keyAccount, a) })
}

// Collection is an album as the backup knows it.
type Collection struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Folder  string `json:"folder"` // folder name under DIR
	Type    string `json:"type"`
	OwnerID int64  `json:"ownerID"`
	// Visibility is the album's when it was last listed (0 visible, 1
	// archived, 2 hidden), for the filters of a run that does not list it.
	Visibility int  `json:"visibility,omitempty"`
	Deleted    bool `json:"deleted,omitempty"`
	// Pruned: a deleted album whose folder quak moved to the trash.
	Pruned bool `json:"pruned,omitempty"`
	// Cursor is the sinceTime up to which every file is saved or recorded.
	Cursor int64 `json:"cursor"`
	// Seen is the album's updationTime when it was last listed to the end:
	// a listing that shows another time (later, or earlier: museum sets it
	// back when a file commits late) lists the album again.
	Seen int64 `json:"seen,omitempty"`
}

// Status is a file's outcome.
type Status string

// File statuses.
const (
	Saved        Status = "saved"
	HashMismatch Status = "hash-mismatch" // saved; its bytes are not what its metadata claims
	Failed       Status = "failed"        // not saved; retried first next run
	// Skipped: not downloaded because the run's filters left it out; kept
	// with its diff entry so a wider run fetches it without re-listing.
	Skipped Status = "skipped"
)

// Meta is the metadata a file's local copy reflects.
type Meta struct {
	Title            string   `json:"title"`
	FileType         int      `json:"fileType,omitempty"`
	CreationTime     int64    `json:"creationTime,omitempty"`
	ModificationTime int64    `json:"modificationTime,omitempty"`
	Caption          string   `json:"caption,omitempty"`
	Latitude         *float64 `json:"latitude,omitempty"`
	Longitude        *float64 `json:"longitude,omitempty"`
	Hash             string   `json:"hash,omitempty"`
	// Offset is the UTC offset ("+02:00") of the place the photo was
	// taken, when Ente's apps recorded it.
	Offset string `json:"offset,omitempty"`
}

// Entry is a file's place in one album folder: its name there and the names
// of every part (a live photo has two).
type Entry struct {
	Name    string   `json:"name"`
	Parts   []string `json:"parts"`
	Deleted bool     `json:"deleted,omitempty"` // removed or trashed on the server; the local copy is kept
	// Copy: the parts were copied from another album's, not hard-linked
	// (the file system could not link).
	Copy bool `json:"copy,omitempty"`
	// Stale: the copy still holds older content than the file's record
	// (refreshing it from another album's copy failed); each run tries
	// again, and nothing links to it meanwhile.
	Stale bool `json:"stale,omitempty"`
	// Meta is what this album's copy and sidecar reflect; each album's copy
	// is brought up to date when that album's diff reports the edit.
	Meta Meta `json:"meta"`
	// Updated is the updationTime of the listing entry this copy reflects,
	// so an entry listed again (the overlap behind the cursor) is not
	// applied twice; 0 in records of older quaks.
	Updated int64 `json:"updated,omitempty"`
	// Sidecars are the XMP and Takeout files quak wrote beside this copy's
	// parts (names in the album folder): the only ones beside them it
	// rewrites, moves or removes. A file of such a name that is not listed
	// is someone else's.
	Sidecars []string `json:"sidecars,omitempty"`
	// SidecarHashes maps a name in Sidecars to the SHA-256 (hex) of the
	// bytes quak last wrote there: a file that no longer holds them was
	// rewritten by another tool and is the user's. Names recorded by older
	// quaks have none.
	SidecarHashes map[string]string `json:"sidecarHashes,omitempty"`
}

// File is one Ente file and where the backup keeps it.
type File struct {
	ID      int64  `json:"id"`
	OwnerID int64  `json:"ownerID"`
	Header  string `json:"header"` // file.decryptionHeader: a new one means new content
	Size    int64  `json:"size"`   // ciphertext bytes
	Meta    Meta   `json:"meta"`
	// LocalHash is the BLAKE2b-512 (base64) of the bytes written, as Meta.Hash
	// is written: "image:video" for a live photo. It differs from Meta.Hash
	// only for a HashMismatch file; empty in records of older quaks. A live
	// photo whose archive held only one usable part has "image:<hash>" or
	// "video:<hash>".
	LocalHash string `json:"localHash,omitempty"`
	Status    Status `json:"status"`
	Error     string `json:"error,omitempty"`
	// Entries maps collection id to the file's place in that album folder.
	Entries map[int64]*Entry `json:"entries"`
	// Pending is the diff entry of a failed file, so the next run can retry
	// it first, before listing anything; PendingAlso, its entries in other
	// albums whose listings showed it while it was failing, so it lands in
	// each of them.
	Pending     *apiclient.File   `json:"pending,omitempty"`
	PendingAlso []*apiclient.File `json:"pendingAlso,omitempty"`
	// View is the file's place in the date view, if it has one.
	View *View `json:"view,omitempty"`
	// Trash lists the album copies --prune moved to the trash, so a file
	// that comes back is moved back rather than downloaded.
	Trash []TrashCopy `json:"trash,omitempty"`
}

// View is a file's place in the date view: hard links to its parts (copies
// where the file system refuses links).
type View struct {
	Folder string   `json:"folder"` // relative to the date view
	Parts  []string `json:"parts"`
	Title  string   `json:"title"`  // the title the names were made from
	Header string   `json:"header"` // the content the links are to
	Copy   bool     `json:"copy,omitempty"`
	// Sidecars are the sidecar links quak made beside the parts (names in
	// the date folder).
	Sidecars []string `json:"sidecars,omitempty"`
}

// TrashCopy is an album copy in the trash: the album it left and where
// its parts and sidecars went, relative to the backup folder.
type TrashCopy struct {
	CollectionID int64    `json:"collectionID"`
	Parts        []string `json:"parts"`
	Sidecar      string   `json:"sidecar,omitempty"`
	// XMP and Takeout are where each part's XMP and Takeout sidecar went
	// ("" for a part without one), when any went.
	XMP     []string `json:"xmp,omitempty"`
	Takeout []string `json:"takeout,omitempty"`
}

// Collections returns every known collection by id.
func (s *Store) Collections() (map[int64]*Collection, error) {
	out := map[int64]*Collection{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCollections).ForEach(func(_, v []byte) error {
			c := &Collection{}
			if err := json.Unmarshal(v, c); err != nil {
				return err
			}
			out[c.ID] = c
			return nil
		})
	})
	return out, err
}

// PutCollection records c.
func (s *Store) PutCollection(c *Collection) error {
	return s.db.Update(func(tx *bolt.Tx) error { return put(tx.Bucket(bucketCollections), id(c.ID), c) })
}

// File returns the file with id, or nil.
func (s *Store) File(fileID int64) (*File, error) {
	var f *File
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketFiles).Get(id(fileID))
		if v == nil {
			return nil
		}
		var err error
		f, err = decodeFile(v)
		return err
	})
	return f, err
}

// Files calls fn for every file, in id order.
func (s *Store) Files(fn func(*File) error) error {
	return s.db.View(func(tx *bolt.Tx) error { return eachFile(tx, fn) })
}

// releaseEvery is how many records a pass reads between two releases of
// the pages it read.
const releaseEvery = 1024

// eachFile calls fn for every file of tx, in id order, keeping the pages
// it reads from adding up in memory.
func eachFile(tx *bolt.Tx, fn func(*File) error) error {
	defer release(tx)
	n := 0
	return tx.Bucket(bucketFiles).ForEach(func(_, v []byte) error {
		if n++; n%releaseEvery == 0 {
			release(tx)
		}
		f, err := decodeFile(v)
		if err != nil {
			return err
		}
		return fn(f)
	})
}

// Commit records files and, when c is not nil, the collection (with its
// advanced cursor), in one transaction.
func (s *Store) Commit(files []*File, c *Collection) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, bb := tx.Bucket(bucketFiles), tx.Bucket(bucketBriefs)
		b.FillPercent, bb.FillPercent = filesFill, filesFill
		added := 0
		for _, f := range files {
			v, err := encodeFile(f)
			if err != nil {
				return err
			}
			if b.Get(id(f.ID)) == nil {
				added++
			}
			if err := b.Put(id(f.ID), v); err != nil {
				return err
			}
			if err := bb.Put(id(f.ID), briefOf(f).encode()); err != nil {
				return err
			}
		}
		switch n := records(tx); {
		case n < 0: // the count was lost to damage
			if err := setRecords(tx, countKeys(tx, bucketFiles)); err != nil {
				return err
			}
		case added > 0:
			if err := setRecords(tx, n+added); err != nil {
				return err
			}
		}
		if c != nil {
			return put(tx.Bucket(bucketCollections), id(c.ID), c)
		}
		return nil
	})
}

// records is the count of file records kept in the meta bucket.
func records(tx *bolt.Tx) int {
	v := tx.Bucket(bucketMeta).Get(keyRecords)
	if len(v) != 8 {
		return -1 // unknown: never equal to a count of briefs
	}
	return int(binary.BigEndian.Uint64(v))
}

func setRecords(tx *bolt.Tx, n int) error {
	return tx.Bucket(bucketMeta).Put(keyRecords, binary.BigEndian.AppendUint64(nil, uint64(n)))
}

// countKeys counts a bucket's keys, letting go of the pages it read.
func countKeys(tx *bolt.Tx, bucket []byte) int {
	n := 0
	c := tx.Bucket(bucket).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		if n++; n%(releaseEvery*16) == 0 {
			release(tx)
		}
	}
	return n
}

func put(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

func id(n int64) []byte {
	k := make([]byte, 8)
	binary.BigEndian.PutUint64(k, uint64(n))
	return k
}

// Verified returns when each file was last verified (files never verified
// are absent).
func (s *Store) Verified() (map[int64]time.Time, error) {
	out := map[int64]time.Time{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVerified)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) == 8 && len(v) == 8 {
				out[int64(binary.BigEndian.Uint64(k))] = time.Unix(int64(binary.BigEndian.Uint64(v)), 0)
			}
			return nil
		})
	})
	return out, err
}

// SetVerified records that files were verified at t.
func (s *Store) SetVerified(ids []int64, t time.Time) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketVerified)
		v := make([]byte, 8)
		binary.BigEndian.PutUint64(v, uint64(t.Unix()))
		for _, fid := range ids {
			if err := b.Put(id(fid), v); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutResume records, as JSON, where file id's interrupted download can be
// taken up; nil v forgets it.
func (s *Store) PutResume(fileID int64, v any) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResume)
		if v == nil {
			return b.Delete(id(fileID))
		}
		return put(b, id(fileID), v)
	})
}

// Resumes returns every recorded resume point, as JSON, by file id.
func (s *Store) Resumes() (map[int64][]byte, error) {
	out := map[int64][]byte{}
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketResume)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if len(k) == 8 {
				out[int64(binary.BigEndian.Uint64(k))] = append([]byte(nil), v...)
			}
			return nil
		})
	})
	return out, err
}

// bboltMagic is the magic number in a bbolt file's meta pages.
const bboltMagic = 0xED0CDAED

// LooksValid reports whether r starts with a bbolt meta page, without
// opening the database (and so without taking its file lock).
func LooksValid(r io.Reader) bool {
	var b [20]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(b[16:20]) == bboltMagic
}
