package restore

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/keys"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

// ImportOptions configure an import: the target and the settings a
// restore takes, and where the import keeps its journal.
type ImportOptions struct {
	Target        Target
	Policy        retry.Policy
	Events        func(Event)
	Now           func() time.Time
	Tools         *thumbnails.Tools
	Rand          io.Reader
	URLsPerMinute int
	Concurrency   int
	// Journal is the folder of the import's journal for this target (made
	// if missing, mode 0700): quak's own, never inside what is imported.
	// Its tmp folder holds what a thumbnail tool reads, for a moment.
	Journal string
	// Memory caps the memory originals hold at once (default 64 MiB):
	// an original up to a third of it (at most 20 MiB), and a live photo,
	// is read whole and uploaded from memory, holding its bytes and 8 MiB
	// more; a larger one is uploaded as it is read, holding one part of its
	// upload and two chunks. One original larger than Memory is still
	// taken, alone.
	Memory int64

	encrypt encryptFunc
}

// defaultMemory is ImportOptions.Memory's default.
const defaultMemory = 64 << 20

// itemMemory is what an original read into memory holds beyond its
// bytes while it is sealed and sent: a chunk of ciphertext kept for the
// self-check, and the chunks an encryption works in.
const itemMemory = 8 << 20

// memoryMax is the largest original (one part) read whole into memory;
// larger ones are uploaded as they are read.
const memoryMax = 20 << 20

// streamMemory is what an original uploaded as it is read holds: one
// part of its upload, and a chunk being sealed.
const streamMemory = partLength + 2*chunkBytes

const chunkBytes = 4 << 20

// Import adds the originals a Source describes to the target account,
// each exactly once, into its albums: what the account already has (the
// same content, type and title) is added to the albums it is missing from
// and never uploaded again. Every upload is journaled before anything of it
// is sent, in o.Journal, so that a run killed at any point is taken up by
// the next without a second file. Errors are Run's, and folder.ErrLocked
// while another import into the account runs; originals that fail one by
// one are in Summary.Failures.
func Import(ctx context.Context, o ImportOptions, albums []ImportAlbum, originals []*Original, src Source) (*Summary, error) {
	ro := Options{Target: o.Target, Policy: o.Policy, Events: o.Events, Now: o.Now, Tools: o.Tools, Rand: o.Rand,
		URLsPerMinute: o.URLsPerMinute, Concurrency: o.Concurrency, encrypt: o.encrypt}
	ro.defaults()
	if o.Memory <= 0 {
		o.Memory = defaultMemory
	}
	j, unlock, err := folder.OpenJournal(o.Journal, o.Target.Endpoint, o.Target.Keys.UserID)
	if err != nil {
		return nil, err
	}
	defer unlock()
	tmp, err := freshTemp(o.Journal)
	if err != nil {
		return nil, err
	}
	p := &plan{albums: map[int64]*sourceAlbum{}}
	for _, a := range albums {
		p.albums[a.ID] = &sourceAlbum{id: a.ID, name: a.Name, typ: a.Type, visibility: a.Visibility}
	}
	r := &run{o: ro, plan: p, sum: &Summary{Files: len(originals)}, encrypt: ro.encrypt, tmp: tmp, j: j}
	im := &importer{r: r, src: src, memory: o.Memory, budget: semaphore.NewWeighted(o.Memory), byOrig: map[*Original]*original{}}
	if err := im.prepare(originals); err != nil {
		return r.sum, err
	}
	return r.sum, im.run(ctx)
}

// freshTemp empties and returns the journal's temp folder: what is in it
// is quak's, left by a run that was killed.
func freshTemp(journal string) (string, error) {
	tmp := filepath.Join(journal, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	return tmp, os.Mkdir(tmp, 0o700)
}

// importer runs an import over restore's engine.
type importer struct {
	r      *run
	src    Source
	memory int64
	budget *semaphore.Weighted // bytes of originals held in memory
	byOrig map[*Original]*original
	all    []*original
	jobs   chan job
	cancel context.CancelFunc
	once   sync.Once
	first  error // the error that ended the run
}

// job is an original for a worker: read into memory (release is the
// budget it holds), or needing no bytes at all.
type job struct {
	o       *original
	release int64
}

// prepare makes restore's originals of the source's.
func (im *importer) prepare(originals []*Original) error {
	for _, src := range originals {
		if _, dup := im.byOrig[src]; dup {
			return fmt.Errorf("import: %s given twice", src.Where)
		}
		if len(src.Albums) == 0 || len(src.Parts) == 0 {
			return fmt.Errorf("import: %s has no album or no part", src.Where)
		}
		o := &original{rec: &state.File{ID: keyID(src.Key), Meta: metaOf(src)}, albums: src.Albums, src: src}
		if src.Hash != "" {
			o.hashes = strings.Split(src.Hash, ":")
		}
		im.byOrig[src] = o
		if tooLarge(src) {
			im.r.failed(o, ErrTooLarge)
			continue
		}
		im.all = append(im.all, o)
		im.r.plan.files = append(im.r.plan.files, o)
	}
	return nil
}

// ErrTooLarge is an original larger than any file Ente takes: museum
// refuses an object over apiclient.MaxObjectSize, and the original's
// ciphertext is larger still.
var ErrTooLarge = fmt.Errorf("larger than the %d GiB Ente takes in one file", apiclient.MaxObjectSize>>30)

// tooLarge reports whether an original's parts (as its source declares
// them) cannot be one file in Ente; such an original is never read, nor
// counted in the storage it needs.
func tooLarge(src *Original) bool {
	var n int64
	for _, p := range src.Parts {
		if p.Size < 0 || p.Size > apiclient.MaxObjectSize {
			return true
		}
		n += p.Size
	}
	return n > apiclient.MaxObjectSize
}

// keyID is the journal's id of an original's content key.
func keyID(key string) int64 {
	sum := sha256.Sum256([]byte("import\x00" + key))
	return int64(binary.BigEndian.Uint64(sum[:8]) >> 1)
}

// metaOf is the metadata an original is uploaded with.
func metaOf(src *Original) catalog.Meta {
	return catalog.Meta{Title: src.Title, FileType: src.FileType, CreationTime: src.CreationTime, ModificationTime: src.ModificationTime,
		Caption: src.Caption, Latitude: src.Latitude, Longitude: src.Longitude, Offset: src.Offset}
}

// run lists the target, checks its storage, then takes each original: those
// that need no bytes (the target has them, or the journal has all it
// needs) and those the source reads, Concurrency at once.
func (im *importer) run(ctx context.Context) error {
	r := im.r
	r.albums = map[int64]*catalog.Album{}
	r.urls = newWindow(r.o.URLsPerMinute, r.o.Now, r.o.Policy.Sleep)
	if r.encrypt == nil {
		r.encrypt = secretstream.NewEncryptReader
	}
	var err error
	if r.tgt, err = r.listTarget(ctx); err != nil {
		return err
	}
	if err := im.recall(); err != nil {
		return err
	}
	need, err := im.need()
	if err != nil {
		return err
	}
	if err := r.checkQuota(ctx, need); err != nil {
		return err
	}
	ctx, im.cancel = context.WithCancel(ctx)
	defer im.cancel()
	var ready, want []*original
	for _, o := range im.all {
		need, err := im.needsBytes(o)
		if err != nil {
			return err
		}
		if need {
			want = append(want, o)
		} else {
			ready = append(ready, o)
		}
	}
	im.jobs = make(chan job)
	var workers sync.WaitGroup
	for range r.o.Concurrency {
		workers.Go(func() {
			for j := range im.jobs {
				im.work(ctx, j)
			}
		})
	}
	var feed sync.WaitGroup
	feed.Go(func() {
		for _, o := range ready {
			select {
			case im.jobs <- job{o: o}:
			case <-ctx.Done():
				return
			}
		}
	})
	srcs := make([]*Original, len(want))
	for i, o := range want {
		srcs[i] = o.src
	}
	readErr := im.src.Read(ctx, srcs, im.put, im.fail)
	feed.Wait()
	close(im.jobs)
	workers.Wait()
	sortFailures(r.sum)
	if im.first != nil {
		return im.first
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return readErr
}

// zipEstimate is what a live photo's archive adds to its two parts.
const zipEstimate = 1 << 10

// need is the ciphertext the import is to upload: one upload per content
// the target does not hold (nor most likely holds) and no run before
// committed, each its parts (in an archive for a live photo) and a
// thumbnail.
func (im *importer) need() (int64, error) {
	r := im.r
	var need int64
	counted := map[string]bool{} // one upload per content
	for _, o := range r.plan.files {
		key := contentKey(o.hash(), o.rec.Meta.FileType, o.rec.Meta.Title)
		if o.hash() == "" {
			key = "import/" + o.src.Key
		}
		if r.tgt.file(key) != nil || counted[key] || r.likelyPresent(o) {
			continue
		}
		counted[key] = true
		in, err := r.j.Intent(o.rec.ID)
		if err != nil {
			return 0, err
		}
		if in != nil && in.FileID != 0 {
			continue
		}
		var n int64
		for _, p := range o.src.Parts {
			n += p.Size
		}
		if len(o.src.Parts) > 1 {
			n += zipEstimate
		}
		need += secretstream.CiphertextSize(n) + thumbEstimate
	}
	return need, nil
}

// recall takes from the journal the hash of each original a run before
// read.
func (im *importer) recall() error {
	for _, o := range im.all {
		if o.hashes != nil {
			continue
		}
		h, err := im.r.j.Seen(o.src.Key)
		if err != nil {
			return err
		}
		if h != "" {
			o.hashes = strings.Split(h, ":")
		}
	}
	return nil
}

// needsBytes reports whether an original must be read: not when the
// target has its content, nor when the journal holds all its upload
// needs (a file committed that the target still holds, or everything sent
// but the commit, into an album the target still has). A record the target
// does not bear out is dropped by one, and the original is read again.
func (im *importer) needsBytes(o *original) (bool, error) {
	in, err := im.r.j.Intent(o.rec.ID)
	if err != nil {
		return false, err
	}
	if in != nil && in.Hash != "" && o.hashes == nil {
		o.hashes = strings.Split(in.Hash, ":")
	}
	switch {
	case in != nil && in.FileID != 0:
		p := im.r.tgt.file(contentKey(in.Hash, o.src.FileType, o.src.Title))
		return p == nil || p.id != in.FileID, nil
	case o.hash() != "" && im.r.tgt.file(contentKey(o.hash(), o.src.FileType, o.src.Title)) != nil:
		return false, nil
	case in != nil && hasBody(in) && in.File.Sent && im.r.tgt.byID(in.Album) != nil:
		return false, nil // the thumbnail's bytes are in the journal
	}
	return true, nil
}

// work restores one original of a worker's and lets its memory go.
func (im *importer) work(ctx context.Context, j job) {
	defer func() {
		j.o.mem = nil
		if j.release > 0 {
			im.budget.Release(j.release)
		}
	}()
	im.settle(ctx, j.o, im.r.one(ctx, j.o))
}

// settle counts how an original ended: a fatal error ends the run.
func (im *importer) settle(ctx context.Context, o *original, err error) {
	switch {
	case err == nil:
	case fatal(ctx, err):
		im.stop(err)
	default:
		im.r.failed(o, err)
	}
}

func (im *importer) stop(err error) {
	im.once.Do(func() {
		im.first = err
		im.cancel()
	})
}

// fail counts an original its source could not give.
func (im *importer) fail(src *Original, err error) {
	if o := im.byOrig[src]; o != nil && !errors.Is(err, context.Canceled) {
		im.r.failed(o, err)
	}
}

// put takes an original's bytes from the source: a large one is uploaded
// as it is read; the others are read into memory (within the budget),
// hashed, and handed to a worker.
func (im *importer) put(ctx context.Context, src *Original, parts []io.Reader) error {
	o := im.byOrig[src]
	if o == nil || len(parts) != len(src.Parts) {
		return fmt.Errorf("import: %s given with %d parts", src.Where, len(parts))
	}
	if len(parts) == 1 && src.Parts[0].Size > min(memoryMax, im.memory/3) {
		return im.stream(ctx, o, parts[0])
	}
	total := int64(itemMemory)
	for _, p := range src.Parts {
		total += p.Size
	}
	total = min(total, im.memory)
	if err := im.budget.Acquire(ctx, total); err != nil {
		return err
	}
	held := true
	defer func() {
		if held {
			im.budget.Release(total)
		}
	}()
	mem, hashes, err := readParts(src, parts)
	if err != nil {
		return err
	}
	if src.Hash != "" && strings.Join(hashes, ":") != src.Hash {
		im.r.failed(o, fmt.Errorf("%w since the Takeout was first read", ErrChanged))
		return nil
	}
	o.mem, o.hashes, o.rec.Meta = mem, hashes, metaOf(src)
	im.remember(o)
	select {
	case im.jobs <- job{o: o, release: total}:
		held = false
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remember records an original's hash in the journal, for a later run
// to know it without reading it.
func (im *importer) remember(o *original) {
	if err := im.r.j.PutSeen(o.src.Key, o.hash()); err != nil {
		im.stop(fmt.Errorf("writing the import journal: %w", err))
	}
}

// readParts reads each part whole and hashes it; a part of another size
// than its source said is the source's error.
func readParts(src *Original, parts []io.Reader) ([][]byte, []string, error) {
	mem := make([][]byte, len(parts))
	hashes := make([]string, len(parts))
	for i, r := range parts {
		want := src.Parts[i].Size
		b := make([]byte, want+1)
		n, err := io.ReadFull(r, b)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF) && int64(n) == want:
		case err == nil:
			return nil, nil, &SourceError{Where: src.Where, Err: fmt.Errorf("%s holds more than its %d bytes", src.Parts[i].Name, want)}
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return nil, nil, &SourceError{Where: src.Where, Err: fmt.Errorf("%s holds %d bytes, not %d", src.Parts[i].Name, n, want)}
		default:
			return nil, nil, err
		}
		mem[i] = b[:want]
		h := keys.NewHash()
		h.Write(mem[i])
		hashes[i] = keys.EncodeB64(h.Sum(nil))
	}
	return mem, hashes, nil
}

func sortFailures(s *Summary) {
	sort.SliceStable(s.Failures, func(i, j int) bool {
		if s.Failures[i].Where != s.Failures[j].Where {
			return s.Failures[i].Where < s.Failures[j].Where
		}
		return s.Failures[i].Source < s.Failures[j].Source
	})
}
