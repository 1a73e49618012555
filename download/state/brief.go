package state

import (
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// bucketBriefs holds, by file id, the few facts of a file's record that
// whole-library passes need (briefLen bytes), so a run that changes
// nothing reads them instead of every record.
var bucketBriefs = []byte("briefs")

// Brief is what a run needs of a file to count it, or to know it must
// read the whole record.
type Brief struct {
	ID     int64
	Status Status
	Size   int64 // ciphertext bytes
	// Placed: the file has at least one album entry.
	Placed bool
	// Pending: the record keeps a diff entry to retry from.
	Pending bool
	// Stale: an album copy still holds older content.
	Stale bool
}

const (
	briefLen    = 10 // status, flags, size
	flagPlaced  = 1
	flagPending = 2
	flagStale   = 4
	statusOther = 0
	statusCoded = 4
	briefsBatch = 20000 // records a transaction briefs when a state is first given briefs
)

var statusCodes = [statusCoded + 1]Status{statusOther: "", 1: Saved, 2: HashMismatch, 3: Failed, 4: Skipped}

func briefOf(f *File) Brief {
	b := Brief{ID: f.ID, Status: f.Status, Size: f.Size, Placed: len(f.Entries) > 0, Pending: f.Pending != nil}
	for _, e := range f.Entries {
		if e != nil && e.Stale {
			b.Stale = true
		}
	}
	return b
}

func (b Brief) encode() []byte {
	v := make([]byte, briefLen)
	for code, s := range statusCodes {
		if s == b.Status {
			v[0] = byte(code)
		}
	}
	if b.Placed {
		v[1] |= flagPlaced
	}
	if b.Pending {
		v[1] |= flagPending
	}
	if b.Stale {
		v[1] |= flagStale
	}
	binary.BigEndian.PutUint64(v[2:], uint64(b.Size))
	return v
}

func decodeBrief(k, v []byte) (Brief, bool) {
	if len(k) != 8 || len(v) != briefLen || int(v[0]) > statusCoded {
		return Brief{}, false
	}
	return Brief{ID: int64(binary.BigEndian.Uint64(k)), Status: statusCodes[v[0]], Size: int64(binary.BigEndian.Uint64(v[2:])),
		Placed: v[1]&flagPlaced != 0, Pending: v[1]&flagPending != 0, Stale: v[1]&flagStale != 0}, true
}

// Briefs calls fn with the brief of every file, in id order. A state no
// backup of this quak has opened yet (read-only) has no briefs: they are
// then made from the records.
func (s *Store) Briefs(fn func(Brief) error) error {
	return s.db.View(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBriefs)
		if bb == nil || string(tx.Bucket(bucketMeta).Get(keyVersion)) != versionText(schemaVersion) {
			return eachFile(tx, func(f *File) error { return fn(briefOf(f)) })
		}
		defer release(tx)
		n := 0
		return bb.ForEach(func(k, v []byte) error {
			if n++; n%(releaseEvery*16) == 0 {
				release(tx)
			}
			b, ok := decodeBrief(k, v)
			if !ok {
				return errCorruptBrief
			}
			return fn(b)
		})
	})
}

// fillBriefs makes the briefs of every record, for a state written by a
// quak that kept none, a batch of records a transaction; the caller marks
// the state as having them once all are made.
func fillBriefs(db *bolt.DB) error {
	var from []byte
	for {
		done := true
		err := db.Update(func(tx *bolt.Tx) error {
			bb, err := tx.CreateBucketIfNotExists(bucketBriefs)
			if err != nil {
				return err
			}
			bb.FillPercent = filesFill
			c := tx.Bucket(bucketFiles).Cursor()
			k, v := c.First()
			if from != nil {
				k, v = c.Seek(from)
			}
			for n := 0; k != nil; k, v = c.Next() {
				if n == briefsPerTx {
					from, done = append([]byte(nil), k...), false
					return nil
				}
				f, err := decodeFile(v)
				if err != nil {
					return err
				}
				if err := bb.Put(k, briefOf(f).encode()); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil || done {
			return err
		}
	}
}

// briefsPerTx is briefsBatch; tests lower it.
var briefsPerTx = briefsBatch
