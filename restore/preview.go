package restore

import (
	"context"
	"io"
	"os"
	"sort"

	"github.com/quak-photos/quak/apiclient/secretstream"
	"github.com/quak-photos/quak/thumbnails"
)

// Preview is what a restore says before it sends anything: what it reads
// and into which account, how much it is to upload, and what stands in
// the way of a restore as complete as the source.
type Preview struct {
	From Origin
	// To is the target account; ToFiles the files it holds now (its own,
	// not in its trash).
	ToEmail, ToEndpoint string
	ToFiles             int
	// Same: the target is the account the backup is of.
	Same bool
	// Resuming: earlier runs of this source into this account left a
	// journal, which this run goes on with.
	Resuming bool
	DryRun   bool
	// Upload originals are to be uploaded: Bytes of ciphertext, and at
	// most ThumbBytes more of thumbnails.
	Upload     int
	Bytes      int64
	ThumbBytes int64
	// Incomplete is set when the backup never completed a run.
	Incomplete *Incomplete
	// Tools are the programs missing for some of the thumbnails: those
	// originals get Ente's placeholder, which no app repairs.
	Tools []MissingTool
	// Shared names the albums others shared with the backed-up account
	// that are left out.
	Shared []string
	// Journal is the journal's folder when it is kept outside the source,
	// for JournalWhy (JournalAsked, JournalFound, JournalReadOnly).
	Journal    string
	JournalWhy string
}

// MissingTool is a program a thumbnail needs that is not on PATH, and how
// many originals to upload need it.
type MissingTool struct {
	Tool  string
	Files int
}

// preview tells what the run is about to do; the target is listed.
func (r *run) preview(ctx context.Context) (*Preview, error) {
	pv := &Preview{From: r.src.Origin, ToEmail: r.o.Target.Email, ToEndpoint: r.o.Target.Endpoint,
		ToFiles: r.tgt.owned, Same: r.src.sameAccount(r.o.Target), DryRun: r.o.DryRun,
		Shared: r.sum.Shared, JournalWhy: r.storeWhy}
	var err error
	if pv.Incomplete, err = r.src.incomplete(r.f, r.plan); err != nil {
		return nil, err
	}
	if r.o.DryRun {
		j, err := r.existingJournal()
		if err != nil {
			return nil, err
		}
		if j != nil {
			empty, err := j.Empty()
			if err != nil {
				return nil, err
			}
			pv.Resuming = !empty
			if r.store != nil {
				pv.Journal = j.Dir()
			}
		}
	} else {
		pv.Resuming = r.resuming
		if r.store != nil {
			pv.Journal = r.j.Dir()
		}
	}
	tools := map[string]int{}
	lacks := r.o.Tools.MissesAny()
	for _, o := range r.uploads() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		pv.Upload++
		pv.Bytes += r.size(o)
		pv.ThumbBytes += thumbEstimate
		if t := r.missingTool(o); lacks && t != "" {
			tools[t]++
		}
	}
	for t, n := range tools {
		pv.Tools = append(pv.Tools, MissingTool{Tool: t, Files: n})
	}
	sort.Slice(pv.Tools, func(i, j int) bool { return pv.Tools[i].Tool < pv.Tools[j].Tool })
	return pv, nil
}

// uploads are the originals the run is to upload: one of each content the
// target does not hold, whose metadata Ente's apps take.
func (r *run) uploads() []*original {
	var out []*original
	counted := map[string]bool{}
	for _, o := range r.plan.files {
		key := contentKey(o.hash(), o.rec.Meta.FileType, o.rec.Meta.Title)
		if r.tgt.file(key) != nil || counted[key] || checkMetadata(o) != nil {
			continue
		}
		counted[key] = true
		out = append(out, o)
	}
	return out
}

// size is the ciphertext o's upload stores, without its thumbnail: its
// parts (in an archive for a live photo, exact below 4 GiB).
func (r *run) size(o *original) int64 {
	var n int64
	for _, p := range o.parts {
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
	}
	if len(o.parts) > 1 {
		n += liveOverhead(o.parts)
	}
	return secretstream.CiphertextSize(n)
}

// missingTool is the program o's thumbnail needs that is missing, or "".
func (r *run) missingTool(o *original) string {
	ft := o.rec.Meta.FileType
	if len(o.parts) > 1 {
		ft = 0 // a live photo's thumbnail is its image's
	}
	head := make([]byte, thumbnails.SniffLength)
	if ft != 1 {
		f, _, err := openPlain(o.parts[0])
		if err != nil {
			return ""
		}
		n, _ := io.ReadFull(f, head)
		_ = f.Close()
		head = head[:n]
	}
	return r.o.Tools.Missing(head, ft)
}
