package takeout

import (
	"context"
	"fmt"
	"strings"
)

// placement is one place a photo has in the Takeout: its entries in one
// folder (an image, a video, or a live photo's image and video) and what
// its JSON says of it.
type placement struct {
	f     *folder
	parts []*entry
	meta  *photoMeta
	rule  string // how its JSON was found (RuleNone: none)
	key   string // its content's identity
}

// rank orders the placements that could describe an original: those with
// a JSON of their own first, an edited copy's borrowed one after, none last.
func (p *placement) rank() int {
	switch p.rule {
	case RuleNone:
		return 2
	case RuleEdited:
		return 1
	}
	return 0
}

// plan matches every folder's photos to their JSON, pairs live photos,
// and makes one original of each content with every album that holds it.
func (t *Takeout) plan(ctx context.Context, s *scanned) {
	t.noteCounts = map[string]int{}
	for _, n := range s.notes {
		t.note(n)
	}
	var places []*placement
	t.allFolders = t.folders(s)
	for _, f := range t.allFolders {
		places = append(places, t.place(f)...)
	}
	places = t.identify(ctx, places)
	t.group(places)
	t.Report.sortNotes()
}

// place matches one folder and returns its placements, leaving out (and
// naming) what Google's trash and a partner's sharing hold.
func (t *Takeout) place(f *folder) []*placement {
	ms := matchFolder(f.media, f.docs)
	names := map[string]bool{}
	photos := make([]*photo, 0, len(f.media))
	for _, e := range f.media {
		names[e.base] = true
		p := &photo{e: e, m: ms[e]}
		if m := p.meta(); m != nil && m.hasTimestamp {
			p.date = &m.taken
		} else if e.date != nil {
			p.date = &e.date.micros
		}
		photos = append(photos, p)
	}
	t.headDates(photos)
	paired := map[*photo]bool{}
	var out []*placement
	for _, pr := range pairLive(photos) {
		paired[pr[0]], paired[pr[1]] = true, true
		pl := &placement{f: f, parts: []*entry{pr[0].e, pr[1].e}, meta: pr[0].meta(), rule: ruleOf(pr[0].m)}
		if pl.meta == nil {
			pl.meta, pl.rule = pr[1].meta(), ruleOf(pr[1].m)
		}
		t.count(pr[0].e, pr[0].m, names, false)
		t.count(pr[1].e, pr[1].m, names, true)
		out = t.keep(out, pl)
	}
	for _, p := range photos {
		if !paired[p] {
			t.count(p.e, p.m, names, false)
			out = t.keep(out, &placement{f: f, parts: []*entry{p.e}, meta: p.meta(), rule: ruleOf(p.m)})
		}
	}
	t.orphans(f)
	return out
}

func ruleOf(m *match) string {
	if m == nil || m.doc == nil {
		return RuleNone
	}
	return m.rule
}

// keep adds pl to out unless its JSON leaves it out: in the trash, or a
// partner's and not asked for.
func (t *Takeout) keep(out []*placement, pl *placement) []*placement {
	why := ""
	switch {
	case pl.meta == nil:
	case pl.meta.trashed:
		why = SkipTrashed
	case pl.meta.partner && !t.o.IncludePartner:
		why = SkipPartner
	}
	if why == "" {
		return append(out, pl)
	}
	for _, e := range pl.parts {
		r := e.p.report
		r.Skipped[why]++
		// The photo was counted as matched (or not) by count: it is
		// skipped instead.
		t.uncount(e)
		t.note(Note{Kind: NoteSkipped, Part: e.p.path, Name: e.name, Reason: why})
	}
	return out
}

// count records in its part's report how a photo found its JSON, and
// names those that found none or several; live says it is a live photo's
// video, which needs none.
func (t *Takeout) count(e *entry, m *match, names map[string]bool, live bool) {
	r := e.p.report
	switch {
	case m != nil && m.doc != nil:
		r.Matched[m.rule]++
		e.counted = m.rule
	case m != nil && len(m.ambiguous) > 0:
		r.Ambiguous++
		e.counted = NoteAmbiguous
		var cands []string
		for _, d := range m.ambiguous {
			cands = append(cands, d.e.base)
		}
		t.note(Note{Kind: NoteAmbiguous, Part: e.p.path, Name: e.name,
			Reason: fmt.Sprintf("more than one metadata JSON could be its (%s); none is used, it is dated from the file", strings.Join(cands, ", "))})
	case live:
		r.Matched[RuleLiveVideo]++
		e.counted = RuleLiveVideo
	default:
		r.Unmatched++
		e.counted = NoteUnmatched
		reason := "no metadata JSON found; it is dated from the file"
		if orig := lookalikeOriginal(e.base, names); orig != "" {
			reason += "; it looks like an edited copy of " + orig + ", by a suffix quak does not know"
		}
		t.note(Note{Kind: NoteUnmatched, Part: e.p.path, Name: e.name, Reason: reason})
	}
}

// uncount takes back what count recorded of a photo that is skipped.
func (t *Takeout) uncount(e *entry) {
	r := e.p.report
	switch e.counted {
	case NoteAmbiguous:
		r.Ambiguous--
	case NoteUnmatched:
		r.Unmatched--
	case "":
	default:
		r.Matched[e.counted]--
		if r.Matched[e.counted] == 0 {
			delete(r.Matched, e.counted)
		}
	}
	e.counted = ""
}

// orphans names a folder's JSON whose photo is in no part given: the sign
// of a part left out.
func (t *Takeout) orphans(f *folder) {
	n := 0
	for _, d := range f.docs {
		if !d.used && !d.photo.trashed {
			n++
			t.note(Note{Kind: NoteOrphanJSON, Part: d.e.p.path, Name: d.e.name, Reason: "its photo is in no part given"})
		}
	}
	if n > 0 {
		t.note(Note{Kind: NoteIncomplete, Name: f.dir,
			Reason: fmt.Sprintf("%d metadata JSON without their photos: a part of the Takeout seems to be missing", n)})
	}
}

// note adds n to the report, capped per kind.
func (t *Takeout) note(n Note) { t.Report.note(n, t.noteCounts) }

// key names an entry's content: its size and CRC-32 when known, else what
// names the file in its folder part.
func (e *entry) key() string {
	if e.hasCRC {
		return fmt.Sprintf("%d:%08x", e.size, e.crc)
	}
	return fmt.Sprintf("f:%d:%d:%s/%s", e.size, e.mod, e.dir, e.base)
}

// placeKey names a placement's content.
func placeKey(parts []*entry) string {
	ks := make([]string, len(parts))
	for i, e := range parts {
		ks[i] = e.key()
	}
	return strings.Join(ks, "+")
}
