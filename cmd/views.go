package cmd

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/sidecars"
)

// viewFlags are backup's choices of metadata files and date view. Each
// one not given on the command line is the backup folder's remembered
// choice, so a cron line stays short.
type viewFlags struct {
	xmp      bool
	sidecars string
	dateView string
}

func (v *viewFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&v.xmp, "xmp", false, "write NAME.EXT.xmp beside every file (dates, place, caption, favourite, albums); --xmp=false stops (remembered per folder)")
	fs.StringVar(&v.sidecars, "sidecars", string(sidecars.Ente), "JSON beside each file: ente (.meta/, as ente export), takeout (Google Takeout's, for immich-go) or none (remembered per folder)")
	fs.StringVar(&v.dateView, "date-view", "", `a second tree of hard links by creation date under "By date/", e.g. YYYY/MM or YYYY/MM/DD; none removes it (remembered per folder)`)
}

// views merges the flags given with what dir remembers, and reads the
// local time zone from $TZ (else the system's).
func (v *viewFlags) views(d deps, fs *pflag.FlagSet, dir string) (backup.Views, error) {
	var out backup.Views
	rem, err := backup.ReadViews(dir)
	if err != nil {
		return out, fmt.Errorf("reading the folder's remembered options: %w", err)
	}
	if rem != nil {
		out.Sidecars, out.XMP, out.DateView = rem.Sidecars, rem.XMP, rem.DateView
	}
	if fs.Changed("xmp") {
		out.XMP = v.xmp
	}
	if fs.Changed("sidecars") || rem == nil {
		if out.Sidecars, err = sidecars.ParseStyle(v.sidecars); err != nil {
			return out, &usageError{fmt.Errorf("--sidecars: %w", err)}
		}
	}
	if fs.Changed("date-view") {
		out.DateView = ""
		if s := strings.TrimSpace(v.dateView); s != "" && !strings.EqualFold(s, "none") {
			if out.DateView, err = sidecars.ParseDateFormat(s); err != nil {
				return out, &usageError{fmt.Errorf("--date-view: %w", err)}
			}
		}
	}
	out.Zone, out.ZoneName = time.Local, "local time"
	if tz := strings.TrimPrefix(d.getenv("TZ"), ":"); tz != "" {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			return out, &usageError{fmt.Errorf("TZ=%q is not a time zone quak knows: %w", tz, err)}
		}
		out.Zone, out.ZoneName = loc, tz
	}
	return out, nil
}

// viewsText says, for people, what metadata a backup keeps.
func viewsText(r *backup.Remembered) string {
	if r == nil {
		r = &backup.Remembered{Sidecars: sidecars.Ente, Applied: true}
	}
	parts := []string{string(r.Sidecars) + " sidecars"}
	if r.XMP {
		parts = append(parts, "XMP")
	}
	if r.DateView != "" {
		parts = append(parts, fmt.Sprintf("date view %s", r.DateView))
	}
	s := strings.Join(parts, ", ")
	if r.Zone != "" {
		s += " (" + r.Zone + ")"
	}
	if !r.Applied {
		s += "; a change is half done, the next backup finishes it"
	}
	return s
}

// viewsJSON is status --json's "views": what the folder remembers.
func viewsJSON(r *backup.Remembered) map[string]any {
	if r == nil {
		r = &backup.Remembered{Sidecars: sidecars.Ente, Applied: true}
	}
	return map[string]any{"sidecars": r.Sidecars, "xmp": r.XMP, "dateView": string(r.DateView), "zone": r.Zone, "applied": r.Applied}
}
