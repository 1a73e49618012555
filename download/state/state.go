package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
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

// Account is the Ente account a backup folder belongs to, or, when Link is
// set, the album of the public link it follows (UserID and Email are then
// zero).
type Account struct {
	UserID   int64  `json:"userID"`
	Email    string `json:"email"`
	Endpoint string `json:"endpoint"`
	Link     int64  `json:"link,omitempty"` // the album's id
}

// Name is a as messages name it, with only what is known of it:
// "carol@example.org on https://api.ente.com (user 42)", without the
// server or the email when none is recorded.
func (a Account) Name() string {
	s := a.Email
	if s == "" {
		s = "user " + strconv.FormatInt(a.UserID, 10)
	}
	if a.Endpoint != "" {
		s += " on " + a.Endpoint
	}
	if a.Email != "" && a.UserID != 0 {
		s += " (user " + strconv.FormatInt(a.UserID, 10) + ")"
	}
	return s
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

// LooksValid reports whether r starts with a bbolt meta page, without
// opening the database (and so without taking its file lock).
func LooksValid(r io.Reader) bool {
	var b [20]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return false
	}
	return binary.LittleEndian.Uint32(b[16:20]) == bboltMagic
}
