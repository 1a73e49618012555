package restore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/filter"
	"github.com/quak-photos/quak/download/folder"
	"github.com/quak-photos/quak/download/state"
)

// Kinds of what a restore reads.
const (
	FromBackup  = "quak backup"
	FromExport  = "Ente CLI export"
	FromDesktop = "Ente desktop export"
)

// Origin is what a restore reads: a quak backup (of the account Email,
// UserID on Endpoint) or an export of Ente's, which records no account.
type Origin struct {
	Kind     string
	Email    string
	Endpoint string
	UserID   int64
}

// origin is the folder restored from: its kind, the account it is a
// backup of (nil for an export) and how to read its plan.
type origin struct {
	Origin
	dir     string
	account *state.Account
	read    func(sel selection) (*plan, error)
}

// identify tells what dir holds. Errors: *folder.DirError for a folder
// that holds nothing quak restores.
func identify(ctx context.Context, f *folder.Folder) (*origin, error) {
	o := &origin{dir: f.Dir}
	switch {
	case f.HasState():
		acct, err := f.Owner()
		if err != nil {
			return nil, err
		}
		o.Kind, o.account = FromBackup, acct
		if acct != nil {
			o.Email, o.Endpoint, o.UserID = acct.Email, acct.Endpoint, acct.UserID
		}
		o.read = func(sel selection) (*plan, error) { return readPlan(f, sel) }
	case IsEnteExport(f.Dir):
		o.Kind = FromExport
		o.read = func(sel selection) (*plan, error) { return sel.narrow(readExport(ctx, f.Dir)) }
	case IsDesktopExport(f.Dir):
		o.Kind = FromDesktop
		o.read = func(sel selection) (*plan, error) { return sel.narrow(readDesktopExport(ctx, f.Dir)) }
	default:
		return nil, &folder.DirError{Dir: f.Shown, Reason: "holds no quak backup and no export of Ente's CLI or desktop app" + parentHint(f.Dir)}
	}
	return o, nil
}

// id names the source for a journal kept outside it: a backup by the
// account it is of, wherever a copy of it is mounted; an export, which
// records no account, by its folder.
func (o *origin) id() string {
	if o.account != nil {
		return "quak backup of user " + strconv.FormatInt(o.account.UserID, 10) + " on " + strings.TrimRight(o.account.Endpoint, "/")
	}
	return o.Kind + " in " + o.dir
}

// sameAccount reports whether the target is the account the backup is of.
func (o *origin) sameAccount(t Target) bool {
	return o.account != nil && o.account.UserID == t.Keys.UserID &&
		strings.TrimRight(o.account.Endpoint, "/") == strings.TrimRight(t.Endpoint, "/")
}

// SharedChoice says whether albums others shared with the backed-up
// account are restored.
type SharedChoice int

const (
	// SharedAuto leaves them out of a restore into the backed-up account
	// itself (they are others' files, still shared with it) and takes
	// them into any other, as the target's own.
	SharedAuto SharedChoice = iota
	SharedTake
	SharedLeave
)

// selection is what a restore takes of the backup: the albums the
// filters choose, and, without shared ones, only the files the account
// owns.
type selection struct {
	albums   filter.Albums
	noShared bool
	user     int64 // the backed-up account (0: unknown, an export)
}

// takeAlbum reports whether album c is chosen; shared, that it was left
// out as shared.
func (s selection) takeAlbum(c *state.Collection) (take, shared bool) {
	if s.noShared && s.user != 0 && c.OwnerID != s.user {
		return false, true
	}
	return s.albums.Take(c.ID, c.Name), false
}

// takeFile reports whether a file of owner is chosen.
func (s selection) takeFile(owner int64) bool {
	return !s.noShared || s.user == 0 || owner == s.user
}

// check fails with a *filter.NoMatchError when an --albums pattern
// matches none of the albums (id → name).
func (s selection) check(names map[int64]string) error {
	miss := s.albums.Unmatched(names)
	if len(miss) == 0 {
		return nil
	}
	all := make([]string, 0, len(names))
	for _, n := range names {
		all = append(all, n)
	}
	sort.Strings(all)
	return &filter.NoMatchError{Pattern: miss[0], Nearest: filter.Nearest(miss[0], all, 3)}
}

// narrow keeps of an export's plan the albums the filters choose, and its
// originals in at least one of them.
func (s selection) narrow(p *plan, err error) (*plan, error) {
	if err != nil {
		return nil, err
	}
	names := map[int64]string{}
	for id, a := range p.albums {
		names[id] = a.name
	}
	if err := s.check(names); err != nil {
		return nil, err
	}
	if s.albums.Empty() {
		return p, nil
	}
	files := p.files[:0]
	for _, o := range p.files {
		var kept []int64
		for _, id := range o.albums {
			if s.albums.Take(id, p.albums[id].name) {
				kept = append(kept, id)
			}
		}
		if o.albums = kept; len(kept) > 0 {
			files = append(files, o)
		} else {
			p.filtered++
		}
	}
	p.files = files
	for id, a := range p.albums {
		if !s.albums.Take(id, a.name) {
			delete(p.albums, id)
		}
	}
	return p, nil
}

// Incomplete says that the backup restored never completed a run: it may
// lack files the account had.
type Incomplete struct {
	// Lacking counts the files the backup listed but never saved: at
	// least that many are not restored (albums its runs never reached are
	// not known).
	Lacking int
	// LastRun is when its last run ended, and how ("interrupted"…);
	// zero when it recorded none.
	LastRun     time.Time
	LastOutcome string
}

// incomplete is the backup's Incomplete, or nil when a run of it
// completed (or it is an export, which records nothing of the kind).
func (o *origin) incomplete(f *folder.Folder, p *plan) (*Incomplete, error) {
	if o.Kind != FromBackup {
		return nil, nil
	}
	_, err := f.LastSuccess()
	switch {
	case err == nil:
		return nil, nil
	case !errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("reading whether the backup ever completed: %w", err)
	}
	in := &Incomplete{Lacking: p.unsaved}
	if last, err := f.LastRun(); err == nil {
		in.LastRun, in.LastOutcome = last.End, last.Outcome
	}
	return in, nil
}
