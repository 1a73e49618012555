package takeout

import (
	"strings"
	"unicode"
)

// jsonKey indexes a folder's photo JSON by what Google made of the name.
type jsonKey struct {
	stem, num string
}

// match is how a photo of a folder found its JSON: the JSON, the rule,
// or the candidates it could not choose between.
type match struct {
	doc       *jsonDoc
	rule      string
	level     int
	ambiguous []*jsonDoc
}

// ruleLevels name the levels of candidates, best first: a photo takes its
// JSON from the best level that has any, and only when that level has
// exactly one. Where a name has a "(n)", the form with it moved behind (as
// Google numbers a second file of one name) comes before the form that
// keeps it in place ("a (2).jpg.supplemental-metadata.json").
var ruleLevels = []string{RuleExact, RuleNumbered, RuleSupplemental, RuleSupplemental, RuleClipped, RuleClipped}

// candidates returns, level by level, the JSON of index that Google could
// have written for a photo named name.
func candidates(name string, index map[jsonKey][]*jsonDoc) [][]*jsonDoc {
	stem, num, ext := splitName(name)
	out := make([][]*jsonDoc, len(ruleLevels))
	add := func(level int, k jsonKey) {
		for _, d := range index[k] {
			if !containsDoc(out[level], d) {
				out[level] = append(out[level], d)
			}
		}
	}
	add(0, jsonKey{name, ""})
	// bases[0] is the name with its number moved behind, bases[1] the
	// name as it is; without a number there is only the name.
	bases := []jsonKey{{name, ""}}
	if num != "" {
		add(1, jsonKey{stem + ext, num})
		bases = []jsonKey{{stem + ext, num}, {name, ""}}
	}
	for i, b := range bases {
		for k := 0; k <= len(supplemental); k++ {
			add(2+i, jsonKey{b.stem + "." + supplemental[:k], b.num})
		}
		// A name of 46 units or more loses the whole suffix to the cut:
		// that is the next level's form.
		if units(b.stem) < clipUnits {
			for _, c := range clips(b.stem + "." + supplemental) {
				add(2+i, jsonKey{c, b.num})
			}
		}
		if isClipped(b.stem) {
			for _, c := range clips(b.stem) {
				add(4+i, jsonKey{c, b.num})
			}
		}
	}
	return out
}

func containsDoc(ds []*jsonDoc, d *jsonDoc) bool {
	for _, x := range ds {
		if x == d {
			return true
		}
	}
	return false
}

// best is a photo's match from its candidates: the best level with any,
// and ambiguous when it has more than one.
func best(levels [][]*jsonDoc) *match {
	for i, ds := range levels {
		switch {
		case len(ds) == 1:
			return &match{doc: ds[0], rule: ruleLevels[i], level: i}
		case len(ds) > 1:
			return &match{rule: ruleLevels[i], level: i, ambiguous: ds}
		}
	}
	return nil
}

// matchFolder finds each photo's JSON in one folder. A JSON two photos
// claim goes to the one that claims it by the better rule, and to neither
// when they tie; an edited copy with none of its own takes its original's
// (shared, not claimed). Nothing is guessed: a photo whose best rule finds
// two JSON gets neither.
func matchFolder(media []*entry, docs []*jsonDoc) map[*entry]*match {
	index := map[jsonKey][]*jsonDoc{}
	for _, d := range docs {
		if d.photo != nil {
			k := jsonKey(d.name)
			index[k] = append(index[k], d)
		}
	}
	out := map[*entry]*match{}
	claims := map[*jsonDoc][]*entry{}
	for _, e := range media {
		m := best(candidates(e.base, index))
		if m == nil {
			continue
		}
		out[e] = m
		if m.doc != nil {
			claims[m.doc] = append(claims[m.doc], e)
		}
	}
	settleClaims(out, claims)
	for _, e := range media {
		if out[e] != nil {
			continue
		}
		if orig, _, ok := editedOriginal(e.base); ok {
			if m := best(candidates(orig, index)); m != nil {
				m.rule = RuleEdited
				out[e] = m
			}
		}
	}
	// A JSON two photos could both be told from has a photo: it is no
	// sign of a part missing.
	for _, m := range out {
		if m.doc != nil {
			m.doc.used = true
		}
		for _, d := range m.ambiguous {
			d.used = true
		}
	}
	return out
}

// settleClaims leaves each JSON to the one photo that claims it by the best
// rule; photos that tie are left ambiguous, and the others unmatched.
func settleClaims(out map[*entry]*match, claims map[*jsonDoc][]*entry) {
	for d, es := range claims {
		if len(es) < 2 {
			continue
		}
		top := 1 << 30
		for _, e := range es {
			top = min(top, out[e].level)
		}
		var winners []*entry
		for _, e := range es {
			if out[e].level == top {
				winners = append(winners, e)
			} else {
				delete(out, e)
			}
		}
		if len(winners) > 1 {
			for _, e := range winners {
				out[e] = &match{rule: out[e].rule, level: top, ambiguous: []*jsonDoc{d}}
			}
		}
	}
}

// lookalikeOriginal names the photo an unmatched one seems to be an edited
// copy of, by a suffix quak does not know ("IMG-retouché.jpg" beside
// "IMG.jpg"), for the report: such a copy is never matched by guess.
func lookalikeOriginal(name string, names map[string]bool) string {
	stem, num, ext := splitName(name)
	i := strings.LastIndexByte(stem, '-')
	if i <= 0 {
		return ""
	}
	for _, r := range stem[i+1:] {
		if !unicode.IsLetter(r) {
			return ""
		}
	}
	if orig := stem[:i] + num + ext; names[orig] {
		return orig
	}
	return ""
}
