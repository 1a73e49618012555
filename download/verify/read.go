package verify

import (
	"context"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/layout"
	"github.com/quak-photos/quak/download/state"
)

// bufferSize is the read buffer each worker hashes through.
const bufferSize = 1 << 20

// look is what a worker found of one file's album copies, for judge to
// report on in the files' order.
type look struct {
	f     *state.File
	cids  []int64      // its albums, in order
	parts [][]partLook // per album in cids, per part; nil for an album not on record
	bytes int64        // bytes read
	done  chan struct{}
}

// partLook is one part of one album copy.
type partLook struct {
	skip   bool        // its path is not one quak would write: not looked at
	fi     os.FileInfo // nil when missing or not a regular file
	hashed bool        // a hash is on record, so it was read
	sum    string
	err    error // reading failed
}

// look stats every part of every album copy of f and hashes those with a
// hash on record, through buf.
func (v *verifier) look(ctx context.Context, l *look, buf []byte) {
	f := l.f
	want := partHashes(f)
	for cid := range f.Entries {
		l.cids = append(l.cids, cid)
	}
	sort.Slice(l.cids, func(i, j int) bool { return l.cids[i] < l.cids[j] })
	l.parts = make([][]partLook, len(l.cids))
	for ci, cid := range l.cids {
		c := v.colls[cid]
		if c == nil {
			continue
		}
		for i, part := range f.Entries[cid].Parts {
			var pl partLook
			p, err := layout.Join(v.dir, c.Folder, part)
			if err != nil {
				pl.skip = true
			} else if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
				pl.fi = fi
				if i < len(want) && want[i] != "" {
					var n int64
					pl.hashed = true
					pl.sum, n, pl.err = v.inodes.hash(ctx, fi, func() (string, int64, error) { return v.hashFile(ctx, p, buf) })
					l.bytes += n
				}
			}
			l.parts[ci] = append(l.parts[ci], pl)
		}
	}
}

// hashFile is Ente's content hash (base64) of the file at p and the bytes
// read, stopping when ctx ends.
func (v *verifier) hashFile(ctx context.Context, p string, buf []byte) (string, int64, error) {
	f, err := v.o.open(p)
	if err != nil {
		return "", 0, err
	}
	defer func() { _ = f.Close() }()
	h := keys.NewHash()
	n, err := io.CopyBuffer(h, download.ContextReader(ctx, f), buf)
	if err != nil {
		return "", n, err
	}
	return keys.EncodeB64(h.Sum(nil)), n, nil
}

// inodes remembers the hash of each inode read, so the hard-linked copies
// of a file are read once. Safe for concurrent use: a second reader of an
// inode being read waits for the first.
type inodes struct {
	mu sync.Mutex
	m  map[fileKey]*inode
}

type inode struct {
	done chan struct{}
	sum  string
	err  error
}

// hash is the hash of fi's inode, calling read (which also gives the bytes
// read) unless it was read already. A failed read is not remembered: the
// next link is read again.
func (c *inodes) hash(ctx context.Context, fi os.FileInfo, read func() (string, int64, error)) (string, int64, error) {
	k, ok := keyOf(fi)
	if !ok {
		return read()
	}
	for {
		c.mu.Lock()
		in := c.m[k]
		if in == nil {
			in = &inode{done: make(chan struct{})}
			c.m[k] = in
			c.mu.Unlock()
			sum, n, err := read()
			in.sum, in.err = sum, err
			if err != nil {
				c.mu.Lock()
				delete(c.m, k)
				c.mu.Unlock()
			}
			close(in.done)
			return sum, n, err
		}
		c.mu.Unlock()
		select {
		case <-in.done:
		case <-ctx.Done():
			return "", 0, ctx.Err()
		}
		if in.err == nil {
			return in.sum, 0, nil
		}
	}
}
