package cmd

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/quak-photos/quak/download/backup"
	"github.com/quak-photos/quak/download/folder"
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
	f := folder.At(dir)
	rem, err := f.ReadViewOptions()
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
	if !out.XMP && out.DateView == "" {
		return out, nil // no view needs a time zone: $TZ does not matter
	}
	out.Zone, out.ZoneName, err = zoneFromTZ(d.getenv("TZ"))
	if err != nil {
		return out, &usageError{err}
	}
	return out, nil
}

// zoneFromTZ reads $TZ as Go and glibc do: unset or empty is the system's
// zone as the process already has it (time.Local), ":" before the value is
// dropped, a value starting with "/" is a zoneinfo file (":/etc/localtime",
// "/usr/share/zoneinfo/Europe/Paris"), anything else an IANA name
// ("Europe/Paris"). Where Go and glibc fall back to UTC without a word (an
// unknown name, a file that is no zoneinfo), quak refuses: the date view's
// folders would be wrong.
func zoneFromTZ(tz string) (*time.Location, string, error) {
	name := strings.TrimPrefix(tz, ":")
	switch {
	case name == "":
		return time.Local, "local time", nil
	case strings.HasPrefix(name, "/"):
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, "", fmt.Errorf("TZ=%q: the zoneinfo file cannot be read: %w", tz, err)
		}
		loc, err := time.LoadLocationFromTZData(name, b)
		if err != nil {
			return nil, "", fmt.Errorf("TZ=%q is not a zoneinfo file: %w", tz, err)
		}
		if name == "/etc/localtime" {
			return loc, "local time", nil
		}
		return loc, name, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, "", fmt.Errorf("TZ=%q is not a time zone quak knows (give a name such as Europe/Paris, or a zoneinfo file such as /usr/share/zoneinfo/Europe/Paris): %w", tz, err)
	}
	return loc, name, nil
}

// viewsText says, for people, what metadata a backup keeps.
func viewsText(r *folder.ViewOptions) string {
	if r == nil {
		r = &folder.ViewOptions{Sidecars: sidecars.Ente, Applied: true}
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
func viewsJSON(r *folder.ViewOptions) map[string]any {
	if r == nil {
		r = &folder.ViewOptions{Sidecars: sidecars.Ente, Applied: true}
	}
	return map[string]any{"sidecars": r.Sidecars, "xmp": r.XMP, "dateView": string(r.DateView), "zone": r.Zone, "applied": r.Applied}
}
