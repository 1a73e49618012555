package backup

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
	"github.com/quak-photos/quak/apiclient/enteapitest"
	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/download"
	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/retry"
	"github.com/quak-photos/quak/thumbnails"
)

// make soak runs TestSoak for -soak (a few minutes); make test runs a
// short slice with a fixed seed.
var (
	soakFor  = flag.Duration("soak", 0, "run the fault soak this long (0: the short slice of make test)")
	soakSeed = flag.Uint64("soak.seed", 1, "first seed of the soak")
)

// Deadlines of the soak's client: fake timers fired when the server
// stalls, so a stall costs no real time.
const (
	soakHeaders = 1 * time.Second
	soakIdle    = 2 * time.Second
)

// soakStats are the figures the soak prints.
type soakStats struct {
	rounds, runs, files, saved, exact       int
	badAtFinal, temps, transientFailures    int
	permanentReported, requests, thumbnails int
	resumed                                 int
	faults                                  map[string]int
}

// chaos picks a random fault for a request: a status burst, 429 with
// Retry-After, a stall, a reset, a cut at a chunk boundary or inside one,
// or a wrong Content-Length. Within one run it fails the requests of one
// file (or one listing route) at most attempts-1 times, so every fault is
// one a retry must absorb: a file that still fails was failed by quak.
type chaos struct {
	mu        sync.Mutex
	rng       *rand.Rand
	rate      float64
	streak    map[string]int
	sizes     map[string]int64 // store route → object size, for cuts
	injected  map[string]int
	lastThumb string
}

var (
	fileRoute  = regexp.MustCompile(`^GET /(?:files/download/|store/\d+/file-)(\d+)$`)
	thumbRoute = regexp.MustCompile(`^GET /(?:files/preview/|store/\d+/thumb-)(\d+)$`)
)

// key groups the requests of one retried operation. Requests come one at a
// time (concurrency 1), so a new thumbnail's object, read back under a
// fresh key, belongs to the preview asked for just before it.
func (c *chaos) key(route string) string {
	if m := fileRoute.FindStringSubmatch(route); m != nil {
		return "file " + m[1]
	}
	if m := thumbRoute.FindStringSubmatch(route); m != nil {
		c.lastThumb = "thumbnail " + m[1]
		return c.lastThumb
	}
	switch {
	case strings.HasPrefix(route, "PUT /store/"):
		return "upload"
	case strings.HasPrefix(route, "GET /store/"):
		return c.lastThumb
	}
	return route
}

func (c *chaos) choose(route string) (enteapitest.Fault, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.key(route)
	if c.streak[k] >= 3 || c.rng.Float64() >= c.rate {
		return enteapitest.Fault{}, false
	}
	c.streak[k]++
	store := strings.HasPrefix(route, "GET /store/")
	kinds := []string{"5xx", "429", "slow headers"}
	switch {
	case route == "PUT /files/thumbnail":
		kinds = []string{"lost response to a write", "5xx"}
	case store && c.sizes[route] > 0: // body faults where the object's size is known
		kinds = append(kinds, "stall mid-body", "reset", "cut at a chunk boundary", "cut mid-chunk", "wrong Content-Length")
	}
	kind := kinds[c.rng.IntN(len(kinds))]
	size := c.sizes[route]
	var f enteapitest.Fault
	switch kind {
	case "5xx":
		f = enteapitest.Status([]int{500, 502, 503, 504}[c.rng.IntN(4)])
	case "429":
		f = enteapitest.RateLimited() // museum sends no Retry-After
	case "slow headers":
		f = enteapitest.StallHeaders()
	case "stall mid-body":
		// Before the last byte: a stall after all of it is no stall to the client.
		// A resumed request's shorter body may end before it: then
		// nothing stalls, and the server's stall hook says nothing.
		f = enteapitest.StallAfter(c.rng.Int64N(max(size, 1)))
	case "reset":
		f = enteapitest.ResetAfter(c.rng.Int64N(size + 1))
	case "cut at a chunk boundary":
		chunks := (size + secretstream.ChunkSize + secretstream.Overhead - 1) / (secretstream.ChunkSize + secretstream.Overhead)
		f = enteapitest.CutAfter(c.rng.Int64N(max(chunks, 1)) * (secretstream.ChunkSize + secretstream.Overhead))
	case "cut mid-chunk":
		f = enteapitest.CutAfter(c.rng.Int64N(max(size, 1)))
	case "wrong Content-Length":
		f = enteapitest.DeclareLength(size + 1 + c.rng.Int64N(1000))
	case "lost response to a write":
		f = enteapitest.LoseResponse()
	}
	c.injected[kind]++
	return f, true
}

// soakStall is a stall the server started: its request (RequestKey), and
// whether it stalls the body (the idle deadline meets it) or the headers.
type soakStall struct {
	key  string
	body bool
}

// resolveStalls fires the stalled request's own fake deadline, as the real
// clock would: the server's stall hook names the request and the deadline
// it meets, and the client's timers are made per request (TimerFor), so a
// listing asked for ahead or another range of the file is never cut by it. A
// fault that never stalled (a resumed body shorter than its stall point)
// sends nothing. A request whose client already gave up arms no timer:
// then nothing fires.
func resolveStalls(stalls <-chan soakStall, timers *enteapitest.Timers, done <-chan struct{}) {
	for {
		select {
		case st := <-stalls:
			d := soakHeaders
			if st.body {
				d = soakIdle
			}
			timers.FireFor(st.key, d, 5*time.Second)
		case <-done:
			return
		}
	}
}

type soakFile struct {
	f     *enteapitest.File
	paths []string // where its parts must end, relative to DIR
}

// soakLibrary is one of every shape: 0 B, one chunk, exactly 4 MiB, a chunk
// and a byte, several chunks, live photos, a file in two albums, and three
// files with permanent faults (gone from the store, damaged at rest, and a
// key no one can open).
func soakLibrary(u *enteapitest.User, big bool) (ok []soakFile, permanent int) {
	a, b := u.AddAlbum("Soak A"), u.AddAlbum("Soak B")
	add := func(al *enteapitest.Album, spec enteapitest.FileSpec, paths ...string) *enteapitest.File {
		f := al.AddFile(spec)
		ok = append(ok, soakFile{f, paths})
		return f
	}
	add(a, enteapitest.FileSpec{Title: "empty.bin", Size: 0}, "Soak A/empty.bin")
	add(a, enteapitest.FileSpec{Title: "one.jpg", Size: 1000, Seed: 1}, "Soak A/one.jpg")
	add(a, enteapitest.FileSpec{Title: "chunk-and-a-byte.mp4", Size: 4<<20 + 1, Seed: 2}, "Soak A/chunk-and-a-byte.mp4")
	add(a, enteapitest.FileSpec{Title: "multi.mp4", Size: 9<<20 + 77, Seed: 4}, "Soak A/multi.mp4") // two ranges
	if big {
		add(a, enteapitest.FileSpec{Title: "exactly-4MiB.mp4", Size: 4 << 20, Seed: 3}, "Soak A/exactly-4MiB.mp4")
	}
	both := add(a, enteapitest.FileSpec{Title: "both.jpg", Size: 3000, Seed: 5}, "Soak A/both.jpg", "Soak B/both.jpg")
	b.Add(both)
	add(b, enteapitest.FileSpec{Title: "live.heic", FileType: 2,
		Data: enteapitest.LivePhoto("heic", []byte("still image"), "mov", []byte("moving video"))}, "Soak B/live.heic", "Soak B/live.mov")
	for i := 0; i < 6; i++ {
		n := fmt.Sprintf("small-%d.jpg", i)
		add(b, enteapitest.FileSpec{Title: n, Size: int64(100 * (i + 1)), Seed: byte(10 + i)}, "Soak B/"+n)
	}
	for i := 0; i < 2; i++ {
		n := fmt.Sprintf("grey-tile-%d.jpg", i)
		add(a, enteapitest.FileSpec{Title: n, Data: enteapitest.SampleJPEG(160, 120, byte(i)), LostThumbnail: true,
			Thumbnail: make([]byte, 40<<10)}, "Soak A/"+n)
	}
	a.AddFile(enteapitest.FileSpec{Title: "gone.jpg", Size: 500, Seed: 20, LostFile: true})
	a.AddFile(enteapitest.FileSpec{Title: "rotten.jpg", Size: 500, Seed: 21, CorruptAtRest: true})
	b.AddFile(enteapitest.FileSpec{Title: "badkey.jpg", Size: 500, Seed: 22, BadKey: true})
	return ok, 3
}

func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("soak")
	}
	st := soakStats{faults: map[string]int{}}
	deadline := time.Now().Add(*soakFor)
	for seed := *soakSeed; ; seed++ {
		soakRound(t, seed, *soakFor > 0, &st)
		if *soakFor == 0 && st.rounds >= 2 || *soakFor > 0 && !time.Now().Before(deadline) {
			break
		}
	}
	total := 0
	kinds := make([]string, 0, len(st.faults))
	for k, n := range st.faults {
		total += n
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	var b strings.Builder
	fmt.Fprintf(&b, "soak: %d rounds, %d runs, %d faults injected\n", st.rounds, st.runs, total)
	for _, k := range kinds {
		fmt.Fprintf(&b, "  %-24s %d\n", k, st.faults[k])
	}
	fmt.Fprintf(&b, "  files saved %d of %d, byte-exact %d\n", st.saved, st.files, st.exact)
	fmt.Fprintf(&b, "  corrupt or truncated at final names %d, temp files left %d\n", st.badAtFinal, st.temps)
	fmt.Fprintf(&b, "  failed after only transient faults %d, permanent faults reported %d\n", st.transientFailures, st.permanentReported)
	fmt.Fprintf(&b, "  thumbnails repaired and read back %d\n", st.thumbnails)
	fmt.Fprintf(&b, "  downloads resumed with Range %d\n", st.resumed)
	fmt.Fprintf(&b, "  requests per file %.2f\n", float64(st.requests)/float64(st.files))
	if *soakFor == 0 {
		t.Log("\n" + b.String())
	} else {
		fmt.Print(b.String())
		assert.GreaterOrEqual(t, total, 1000, "the soak must inject at least 1,000 faults")
	}
	assert.Positive(t, total)
	assert.Equal(t, st.files, st.saved)
	assert.Equal(t, st.saved, st.exact)
	assert.Zero(t, st.badAtFinal)
	assert.Zero(t, st.temps)
	assert.Zero(t, st.transientFailures)
}

// soakRound backs up a fresh library under random faults, run after run,
// until everything that can be saved is, checking the folder after each.
func soakRound(t *testing.T, seed uint64, big bool, st *soakStats) {
	t.Helper()
	s := enteapitest.New(enteapitest.Config{PageSize: 4})
	defer s.Close()
	u := s.AddUser("soak@example.org", "pw", enteapitest.UserOptions{})
	files, permanent := soakLibrary(u, big)
	dir := t.TempDir()
	timers := enteapitest.NewTimers()
	hc := &http.Client{Transport: apiclient.NewDeadlineTransport(http.DefaultTransport.(*http.Transport).Clone(),
		apiclient.Deadlines{Headers: soakHeaders, BodyIdle: soakIdle, TimerFor: timers.For})}
	c := &chaos{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), rate: 0.35, streak: map[string]int{},
		sizes: map[string]int64{}, injected: map[string]int{}}
	for _, sf := range files {
		c.sizes[fmt.Sprintf("GET /store/%d/file-%d", u.ID, sf.f.ID)] = secretstream.CiphertextSize(int64(len(sf.f.Plaintext())))
		if enc, ok := sf.f.Thumbnail(); ok {
			c.sizes[fmt.Sprintf("GET /store/%d/thumb-%d", u.ID, sf.f.ID)] = int64(len(enc))
		}
	}
	done := make(chan struct{})
	defer close(done)
	stalls := make(chan soakStall, 64)
	s.SetStallHook(func(key string, body bool) { stalls <- soakStall{key, body} })
	defer s.SetStallHook(nil)
	go resolveStalls(stalls, timers, done)
	s.SetChaos(c.choose)
	defer s.SetChaos(nil)

	permanentIDs := map[int64]bool{}
	p := retry.Default()
	p.Sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	// Files of more than 1 MiB come as ranges of one chunk, as many in
	// flight as by default, four files at once: the faults meet parallel
	// ranges and buffers passed from file to file too.
	o := Options{Dir: dir, Transfer: Transfer{Policy: p, Concurrency: 4, Streams: download.DefaultStreams, StreamAbove: 1 << 20},
		Source: Source{Client: s.Client(hc).WithToken(u.Token()),
			Keys: catalog.Keys{UserID: u.ID, MasterKey: u.MasterKey, PublicKey: u.PublicKey, SecretKey: u.SecretKey}}}
	okIDs := map[int64]bool{}
	for _, sf := range files {
		okIDs[sf.f.ID] = true
	}
	var mu sync.Mutex
	o.Events = func(e Event) {
		if e.Kind != FileFailed {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if okIDs[e.FileID] {
			st.transientFailures++
			t.Logf("seed %d: file %d failed after transient faults: %v", seed, e.FileID, e.Err)
		} else {
			permanentIDs[e.FileID] = true
		}
	}
	for run := 1; ; run++ {
		require.LessOrEqual(t, run, 20, "seed %d: the library never completed", seed)
		st.runs++
		c.mu.Lock()
		c.streak = map[string]int{} // each run retries afresh
		c.mu.Unlock()
		sum, err := Run(context.Background(), o)
		require.NoError(t, err, "seed %d run %d", seed, run)
		st.badAtFinal += soakCheckFinals(t, dir, files)
		st.temps += soakTemps(t, dir)
		if sum.Failed == permanent && soakAllSaved(dir, files) {
			break
		}
	}
	soakThumbnails(t, seed, o, files, permanentIDs, c, st)
	assert.Zero(t, s.ExactRepeats(), "seed %d: a thumbnail commit repeated exactly (it wedges museum)", seed)
	assert.Zero(t, s.Hung(), "seed %d", seed)
	st.rounds++
	st.permanentReported += len(permanentIDs)
	assert.Len(t, permanentIDs, permanent, "seed %d: every permanent fault ends as a reported failure", seed)
	for k, n := range c.injected {
		st.faults[k] += n
	}
	st.files += len(files)
	for _, sf := range files {
		ok, exact := true, true
		for i, p := range sf.paths {
			b, err := os.ReadFile(filepath.Join(dir, p))
			ok = ok && err == nil
			exact = exact && err == nil && string(b) == string(soakPart(sf, i))
		}
		if ok {
			st.saved++
		}
		if exact {
			st.exact++
		}
	}
	st.requests += s.RequestsWithPrefix("GET ")
	for _, sf := range files {
		for _, rg := range s.Ranges(fmt.Sprintf("GET /store/%d/file-%d", u.ID, sf.f.ID)) {
			if resumedRange(rg) {
				st.resumed++
			}
		}
	}
}

// resumedRange reports a Range that takes a download up where a cut left
// it: one from an offset on, or one of several ranges that does not start
// on a range's edge (the rest of a cut range).
func resumedRange(rg string) bool {
	var from, to int64
	if _, err := fmt.Sscanf(rg, "bytes=%d-%d", &from, &to); err == nil {
		return from%download.WireChunk != 0
	}
	return rg != ""
}

// soakPart is the plaintext part i of a file must hold.
func soakPart(sf soakFile, i int) []byte {
	if strings.HasSuffix(sf.paths[0], ".heic") {
		return [][]byte{[]byte("still image"), []byte("moving video")}[i]
	}
	return sf.f.Plaintext()
}

// soakCheckFinals counts files at their final names whose bytes are not
// exactly their plaintext: it must stay 0 after every run, finished or not.
func soakCheckFinals(t *testing.T, dir string, files []soakFile) int {
	t.Helper()
	bad := 0
	for _, sf := range files {
		for i, p := range sf.paths {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err == nil && string(b) != string(soakPart(sf, i)) {
				t.Errorf("%s holds %d wrong bytes at its final name", p, len(b))
				bad++
			}
		}
	}
	return bad
}

func soakAllSaved(dir string, files []soakFile) bool {
	for _, sf := range files {
		for _, p := range sf.paths {
			if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
				return false
			}
		}
	}
	return true
}

func soakTemps(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), durable.TempPrefix) {
			t.Errorf("temp file left: %s", p)
			n++
		}
		return nil
	})
	return n
}

// soakThumbnails runs the thumbnail helper under the same faults, lost
// answers to its commits included: every lost thumbnail ends repaired and
// readable, and no thumbnail is ever called missing because of a fault. A
// commit that failed is not sent again in its run (a repeat can wedge
// museum), so more runs may be needed: with a fault on one request in
// three, three runs left a thumbnail unrepaired for about one seed in 25.
func soakThumbnails(t *testing.T, seed uint64, o Options, files []soakFile, permanent map[int64]bool, c *chaos, st *soakStats) {
	t.Helper()
	want := 0
	for _, sf := range files {
		if strings.Contains(sf.paths[0], "grey-tile") {
			want++
		}
	}
	repaired := 0
	for run := 1; run <= 10 && repaired < want; run++ {
		c.mu.Lock()
		c.streak = map[string]int{}
		c.mu.Unlock()
		var unknown []int64
		sum, err := thumbnails.Run(context.Background(), thumbnails.Options{Client: o.Client, Keys: o.Keys, Policy: o.Policy,
			Concurrency: 1, TempDir: t.TempDir(), Tools: thumbnails.Tools{
				LookPath: func(string) (string, error) { return "", os.ErrNotExist },
				Run:      func(context.Context, string, ...string) ([]byte, error) { return nil, os.ErrNotExist },
			},
			Events: func(e thumbnails.Event) {
				if e.Class == thumbnails.Unknown && !permanent[e.FileID] {
					unknown = append(unknown, e.FileID)
				}
				if e.Err != nil && e.Action != thumbnails.TooLarge && !permanent[e.FileID] {
					t.Logf("seed %d run %d: thumbnail of file %d: %s, %s: %v", seed, run, e.FileID, e.Class, e.Action, e.Err)
				}
			}})
		require.NoError(t, err, "seed %d", seed)
		if len(unknown) > 0 {
			st.transientFailures += len(unknown)
			t.Errorf("seed %d: thumbnails of %v unknown after transient faults", seed, unknown)
		}
		repaired += sum.Actions[thumbnails.Repaired]
	}
	for _, sf := range files {
		if strings.Contains(sf.paths[0], "grey-tile") {
			enc, ok := sf.f.Thumbnail()
			if !ok {
				t.Errorf("seed %d: file %d still has no thumbnail", seed, sf.f.ID)
				continue
			}
			plain, err := secretstream.OpenBlob(sf.f.Key(), sf.f.ThumbnailHeader(), enc)
			if err != nil || !thumbnails.IsImage(plain) {
				t.Errorf("seed %d: file %d's new thumbnail does not read: %v", seed, sf.f.ID, err)
			}
		}
	}
	assert.Equal(t, want, repaired, "seed %d", seed)
	st.thumbnails += repaired
}
