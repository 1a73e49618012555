package state

import (
	"encoding/binary"
	"time"

	bolt "go.etcd.io/bbolt"
)

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
