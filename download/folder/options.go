package folder

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/quak-photos/quak/download/durable"
	"github.com/quak-photos/quak/download/sidecars"
)

// ViewOptions are the views (sidecars, XMP, date view) a backup folder
// keeps, remembered in DIR/.quak/options.json so later runs need no flags.
type ViewOptions struct {
	Sidecars sidecars.Style      `json:"sidecars"`
	XMP      bool                `json:"xmp"`
	DateView sidecars.DateFormat `json:"dateView,omitempty"`
	// Zone names the time zone the views were made in; ZoneRules tells one
	// zone's rules from another's.
	Zone      string `json:"zone,omitempty"`
	ZoneRules string `json:"zoneRules,omitempty"`
	// Applied is false while a change of views is under way; the next run
	// finishes it.
	Applied bool `json:"applied"`
}

// ReadViewOptions returns the views remembered for the folder, or nil when
// none were. A file that is damaged or edited into values the flags would
// refuse is an error naming the file, never used as it is.
func (f *Folder) ReadViewOptions() (*ViewOptions, error) {
	path := f.path(optionsFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m ViewOptions
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := m.check(); err != nil {
		return nil, fmt.Errorf("%s: %w (fix or remove the file; the flags set it again)", path, err)
	}
	return &m, nil
}

// WriteViewOptions remembers v for the folder.
func (f *Folder) WriteViewOptions(v ViewOptions) error {
	return f.writeJSON(optionsFile, v)
}

// check refuses what the flags would refuse, and a zone or fingerprint
// quak could not have written.
func (m *ViewOptions) check() error {
	style, err := sidecars.ParseStyle(string(m.Sidecars))
	if err != nil || style != m.Sidecars {
		return fmt.Errorf("sidecars: %q is not a sidecar style: use ente, takeout or none", m.Sidecars)
	}
	if m.DateView != "" {
		if _, err := sidecars.ParseDateFormat(string(m.DateView)); err != nil {
			return fmt.Errorf("dateView: %w", err)
		}
	}
	if len(m.Zone) > 255 || strings.ContainsFunc(m.Zone, func(r rune) bool { return r < ' ' || r == 0x7f || r == utf8.RuneError }) {
		return fmt.Errorf("zone: %q is not a time zone's name", m.Zone)
	}
	if m.ZoneRules != "" {
		if _, err := strconv.ParseUint(m.ZoneRules, 16, 64); err != nil || len(m.ZoneRules) != 16 {
			return fmt.Errorf("zoneRules: %q is not what quak writes", m.ZoneRules)
		}
	}
	return nil
}

// writeJSON writes v to the file name in DIR/.quak atomically; the
// caller syncs DIR/.quak when it must.
func (f *Folder) writeJSON(name string, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	return durable.WriteFile(f.Temp(), f.path(name), b, 0o644)
}

// marshal is v as quak writes JSON files: indented, ending in a newline.
func marshal(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// readJSON reads the file name in DIR/.quak into v; a missing file is
// os.ErrNotExist, a damaged one an error naming it.
func (f *Folder) readJSON(name string, v any) error {
	path := f.path(name)
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
