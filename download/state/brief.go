package state

import (
	"encoding/binary"
	"hash/crc32"
	"slices"

	bolt "go.etcd.io/bbolt"
)

// bucketBriefs holds, by file id, the few facts of a file's record that
// whole-library passes need (briefLen bytes), so a run that changes
// nothing reads them instead of every record.
var bucketBriefs = []byte("briefs")

// Brief is what a run needs of a file to count it, to find it on disk, or
// to know it must read the whole record.
type Brief struct {
	ID     int64
	Status Status
	Size   int64 // ciphertext bytes
	// Pending: the record keeps a diff entry to retry from.
	Pending bool
	// Places are the file's album entries, in collection id order.
	Places []Place
}

// Place is where an album entry keeps a file: what a run looks for on
// disk.
type Place struct {
	CollectionID int64
	Name         string
	Parts        []string
	Deleted      bool
	Stale        bool
}

// Placed reports whether the file has an album entry.
func (b Brief) Placed() bool { return len(b.Places) > 0 }

// Stale reports whether an album copy still holds older content.
func (b Brief) Stale() bool {
	for _, p := range b.Places {
		if p.Stale {
			return true
		}
	}
	return false
}

const (
	briefHead   = 10 // status, flags, size; then how many places, and each
	flagPending = 2
	// a place's flags
	placeDeleted = 1
	placeStale   = 2
	placeParts   = 4 // its parts are not just its name
	placeFlags   = placeDeleted | placeStale | placeParts
	statusCoded  = 4
	briefCRC     = 4     // a CRC-32C of the rest ends every brief
	briefsBatch  = 10000 // records a transaction briefs when a state is first given briefs
)

var statusCodes = [statusCoded + 1]Status{0: "", 1: Saved, 2: HashMismatch, 3: Failed, 4: Skipped}

func briefOf(f *File) Brief {
	b := Brief{ID: f.ID, Status: f.Status, Size: f.Size, Pending: f.Pending != nil}
	cids := make([]int64, 0, len(f.Entries))
	for cid, e := range f.Entries {
		if e != nil {
			cids = append(cids, cid)
		}
	}
	slices.Sort(cids)
	for _, cid := range cids {
		e := f.Entries[cid]
		b.Places = append(b.Places, Place{CollectionID: cid, Name: e.Name, Parts: e.Parts, Deleted: e.Deleted, Stale: e.Stale})
	}
	return b
}

func (b Brief) encode() []byte {
	v := make([]byte, briefHead, briefHead+32*len(b.Places))
	for code, s := range statusCodes {
		if s == b.Status {
			v[0] = byte(code)
		}
	}
	if b.Pending {
		v[1] |= flagPending
	}
	binary.BigEndian.PutUint64(v[2:], uint64(b.Size))
	v = binary.AppendUvarint(v, uint64(len(b.Places)))
	for _, p := range b.Places {
		v = binary.AppendVarint(v, p.CollectionID)
		var fl byte
		if p.Deleted {
			fl |= placeDeleted
		}
		if p.Stale {
			fl |= placeStale
		}
		oneName := len(p.Parts) == 1 && p.Parts[0] == p.Name
		if !oneName {
			fl |= placeParts
		}
		v = append(v, fl)
		v = appendString(v, p.Name)
		if !oneName {
			v = binary.AppendUvarint(v, uint64(len(p.Parts)))
			for _, part := range p.Parts {
				v = appendString(v, part)
			}
		}
	}
	return sealed(v)
}

// sealed ends v with its CRC-32C: a brief changed on disk, even one that
// still decodes, is told from the one quak wrote.
func sealed(v []byte) []byte { return binary.BigEndian.AppendUint32(v, crc32.Checksum(v, castagnoli)) }

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func appendString(v []byte, s string) []byte {
	return append(binary.AppendUvarint(v, uint64(len(s))), s...)
}

func decodeBrief(k, v []byte) (Brief, error) {
	if len(k) != 8 || len(v) < briefHead+briefCRC {
		return Brief{}, errCorruptBrief
	}
	body := v[:len(v)-briefCRC]
	if crc32.Checksum(body, castagnoli) != binary.BigEndian.Uint32(v[len(body):]) {
		return Brief{}, errCorruptBrief
	}
	v = body
	if int(v[0]) > statusCoded || v[1]&^flagPending != 0 {
		return Brief{}, errCorruptBrief
	}
	b := Brief{ID: int64(binary.BigEndian.Uint64(k)), Status: statusCodes[v[0]], Size: int64(binary.BigEndian.Uint64(v[2:])),
		Pending: v[1]&flagPending != 0}
	r := briefReader{v: v[briefHead:]}
	places := r.uvarint()
	if places > uint64(len(r.v)) {
		return Brief{}, errCorruptBrief
	}
	for ; places > 0 && r.err == nil; places-- {
		p := Place{CollectionID: r.varint()}
		fl := r.byte()
		if fl&^placeFlags != 0 {
			return Brief{}, errCorruptBrief
		}
		p.Deleted, p.Stale = fl&placeDeleted != 0, fl&placeStale != 0
		p.Name = r.string()
		if fl&placeParts == 0 {
			p.Parts = []string{p.Name}
		} else {
			n := r.uvarint()
			if n > uint64(len(r.v)) {
				return Brief{}, errCorruptBrief
			}
			p.Parts = make([]string, 0, n)
			for range n {
				p.Parts = append(p.Parts, r.string())
			}
		}
		b.Places = append(b.Places, p)
	}
	if r.err == nil && len(r.v) > 0 {
		r.err = errCorruptBrief
	}
	return b, r.err
}

// briefReader reads a brief's places; a brief cut short sets err.
type briefReader struct {
	v   []byte
	err error
}

func (r *briefReader) varint() int64 {
	x, n := binary.Varint(r.v)
	if n <= 0 {
		r.err, r.v = errCorruptBrief, nil
		return 0
	}
	r.v = r.v[n:]
	return x
}

func (r *briefReader) uvarint() uint64 {
	x, n := binary.Uvarint(r.v)
	if n <= 0 {
		r.err, r.v = errCorruptBrief, nil
		return 0
	}
	r.v = r.v[n:]
	return x
}

func (r *briefReader) byte() byte {
	if len(r.v) == 0 {
		r.err = errCorruptBrief
		return 0
	}
	c := r.v[0]
	r.v = r.v[1:]
	return c
}

func (r *briefReader) string() string {
	n := r.uvarint()
	if n > uint64(len(r.v)) {
		r.err, r.v = errCorruptBrief, nil
		return ""
	}
	s := string(r.v[:n])
	r.v = r.v[n:]
	return s
}

// Briefs calls fn with the brief of every file, in id order, then with
// those of records found without one. A state no backup of this quak has
// opened yet (read-only) has no briefs: they are then made from the
// records. A brief that is damaged (its checksum fails) is made from its
// record instead, and written again afterwards when the state is open for
// writing; a brief whose record is gone is dropped. When the briefs are
// not as many as the records counted, every record is looked at (see
// reconcile). Only a damaged record is an error.
func (s *Store) Briefs(fn func(Brief) error) error {
	var damaged [][]byte
	seen, want := 0, 0
	err := s.db.View(func(tx *bolt.Tx) error {
		bb := tx.Bucket(bucketBriefs)
		if bb == nil || string(tx.Bucket(bucketMeta).Get(keyVersion)) != versionText(schemaVersion) {
			return eachFile(tx, func(f *File) error { return fn(briefOf(f)) })
		}
		defer release(tx)
		want = records(tx)
		files := tx.Bucket(bucketFiles)
		return bb.ForEach(func(k, v []byte) error {
			if seen++; seen%(releaseEvery*16) == 0 {
				release(tx)
			}
			b, err := decodeBrief(k, v)
			if err != nil {
				damaged = append(damaged, append([]byte(nil), k...))
				rec := files.Get(k)
				if rec == nil {
					seen--
					return nil // a brief left of a record that is gone
				}
				f, ferr := decodeFile(rec)
				if ferr != nil {
					return ferr
				}
				b = briefOf(f)
			}
			return fn(b)
		})
	})
	if err == nil && seen != want {
		// A brief is missing (or left of a record that is gone), or the
		// count is: compare every record with the briefs.
		return s.reconcile(fn)
	}
	if err != nil || len(damaged) == 0 || s.db.IsReadOnly() {
		return err
	}
	return s.db.Update(func(tx *bolt.Tx) error { return rebrief(tx, damaged) })
}

// rebrief makes the damaged briefs again from their records, and
// drops those whose record is gone.
func rebrief(tx *bolt.Tx, damaged [][]byte) error {
	files, bb := tx.Bucket(bucketFiles), tx.Bucket(bucketBriefs)
	for _, k := range damaged {
		rec := files.Get(k)
		if rec == nil {
			if err := bb.Delete(k); err != nil {
				return err
			}
			continue
		}
		f, err := decodeFile(rec)
		if err != nil {
			return err
		}
		if err := bb.Put(k, briefOf(f).encode()); err != nil {
			return err
		}
	}
	return nil
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
				if n%releaseEvery == 0 {
					release(tx) // the writer alone moves the mapping, when it commits
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

// reconcile hands fn the brief of every record that has none, made from
// the record, and, when the state is open for writing, writes those
// briefs, drops briefs whose record is gone and counts the records again.
// A brief damaged and read from its record by the pass before is written
// again here too.
func (s *Store) reconcile(fn func(Brief) error) error {
	var absent, redo []Brief // records without a brief; with a damaged one
	var orphans [][]byte
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		defer release(tx)
		bb := tx.Bucket(bucketBriefs)
		c := tx.Bucket(bucketFiles).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%(releaseEvery*16) == 0 {
				release(tx)
			}
			b := bb.Get(k)
			if b != nil {
				if _, err := decodeBrief(k, b); err == nil {
					continue
				}
			}
			f, err := decodeFile(v)
			if err != nil {
				return err
			}
			if b == nil {
				absent = append(absent, briefOf(f))
			} else {
				redo = append(redo, briefOf(f))
			}
		}
		files := tx.Bucket(bucketFiles)
		return bb.ForEach(func(k, _ []byte) error {
			if files.Get(k) == nil {
				orphans = append(orphans, append([]byte(nil), k...))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	for _, b := range absent {
		if err := fn(b); err != nil {
			return err
		}
	}
	if s.db.IsReadOnly() {
		return nil
	}
	return s.db.Update(func(tx *bolt.Tx) error { return putBriefs(tx, append(absent, redo...), orphans, n) })
}

// putBriefs writes briefs, removes the orphans (briefs of no record) and
// sets the count of records to n.
func putBriefs(tx *bolt.Tx, briefs []Brief, orphans [][]byte, n int) error {
	bb := tx.Bucket(bucketBriefs)
	for _, b := range briefs {
		if err := bb.Put(id(b.ID), b.encode()); err != nil {
			return err
		}
	}
	for _, k := range orphans {
		if err := bb.Delete(k); err != nil {
			return err
		}
	}
	return setRecords(tx, n)
}
