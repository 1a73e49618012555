package state

import (
	"encoding/json"

	bolt "go.etcd.io/bbolt"
)

// bucketLocal keeps the hashes of files in the backup folder that no
// record claims (an `ente export`'s, say), so each is hashed once: its
// path relative to DIR → LocalFile.
var bucketLocal = []byte("local")

// LocalFile is a file of the backup folder that quak hashed: its size and
// modification time (ns) when hashed, and its BLAKE2b-512 (base64), as
// Ente's metadata writes a hash.
type LocalFile struct {
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime"`
	Hash  string `json:"hash"`
}

// Local returns what was recorded of the file at rel, if anything.
func (s *Store) Local(rel string) (LocalFile, bool, error) {
	var lf LocalFile
	found := false
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLocal)
		if b == nil {
			return nil
		}
		v := b.Get([]byte(rel))
		if v == nil {
			return nil
		}
		found = json.Unmarshal(v, &lf) == nil
		return nil
	})
	return lf, found, err
}

// PutLocal records the hash of the file at rel.
func (s *Store) PutLocal(rel string, lf LocalFile) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketLocal)
		if err != nil {
			return err
		}
		return put(b, []byte(rel), lf)
	})
}
