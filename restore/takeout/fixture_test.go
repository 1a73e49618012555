package takeout

import (
	"sort"
	"strings"
	"time"

	"github.com/quak-photos/quak/restore"
	tt "github.com/quak-photos/quak/restore/takeout/takeouttest"
)

// The trap Takeout and what its import must make, from takeouttest.
var (
	trapTakeout = tt.Trap
	t2019       = tt.T2019
	t2020       = tt.T2020
	t2021       = tt.T2021
	t2022       = tt.T2022
)

type wantOriginal = tt.Want

func trapWant() []wantOriginal { return tt.TrapWant() }

// originalView is an original as a test compares it.
type originalView struct {
	title    string
	typ      int
	created  string // RFC 3339, UTC
	offset   string
	lat      float64
	caption  string
	archived bool
	albums   string
}

func viewOf(tk *Takeout, o *restore.Original) *originalView {
	names := map[int64]string{}
	for _, a := range tk.Albums {
		names[a.ID] = a.Name
	}
	var as []string
	for _, id := range o.Albums {
		as = append(as, names[id])
	}
	sort.Strings(as)
	v := &originalView{title: o.Title, typ: o.FileType, created: time.UnixMicro(o.CreationTime).UTC().Format(time.RFC3339), offset: o.Offset,
		caption: o.Caption, archived: o.Archived, albums: strings.Join(as, ", ")}
	if o.Latitude != nil {
		v.lat = *o.Latitude
	}
	return v
}

func view(w wantOriginal) *originalView {
	return &originalView{title: w.Title, typ: w.Type, created: w.Created.UTC().Format(time.RFC3339), offset: w.Offset, lat: w.Lat, caption: w.Caption,
		archived: w.Archived, albums: w.Albums}
}
