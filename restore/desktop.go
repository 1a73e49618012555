package restore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/quak-photos/quak/download/folder"
)

// Ente's desktop app exports into a folder per album too, but records
// what it exported in export_status.json at the top (the album folder of
// each album id, and each file's name by "fileID_albumID_updationTime":
// a live photo's as JSON naming its image and video), and writes a
// Takeout-like sidecar per part in the album's metadata folder: the name,
// times in seconds, the caption and the place. It records no hash.
const (
	desktopRecordName = "export_status.json"
	desktopMetaDir    = "metadata"
	// maxRecord caps export_status.json: about a hundred bytes a file.
	maxRecord = 1 << 30
)

type desktopRecord struct {
	CollectionExportNames map[string]string `json:"collectionExportNames"`
	FileExportNames       map[string]string `json:"fileExportNames"`
}

type desktopTime struct {
	Timestamp json.RawMessage `json:"timestamp"` // seconds, a string or a number
}

type desktopMeta struct {
	Title            string       `json:"title"`
	PhotoTakenTime   *desktopTime `json:"photoTakenTime"`
	CreationTime     *desktopTime `json:"creationTime"`
	ModificationTime *desktopTime `json:"modificationTime"`
	Caption          string       `json:"caption"`
	GeoData          *struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	} `json:"geoData"`
}

// IsDesktopExport reports whether dir holds an export of Ente's desktop app.
func IsDesktopExport(dir string) bool { return isFile(filepath.Join(dir, desktopRecordName)) }

// readDesktopExport reads an export of Ente's desktop app: one original
// per file id, in each album folder that holds a copy with its sidecar.
// With no hash recorded, each part is hashed as the export holds it.
func readDesktopExport(ctx context.Context, dir string) (*plan, error) {
	var rec desktopRecord
	if err := readJSONFileMax(filepath.Join(dir, desktopRecordName), &rec, maxRecord); err != nil {
		return nil, err
	}
	p := &plan{dir: dir, albums: map[int64]*sourceAlbum{}, unread: map[int64][]int64{}}
	folders := map[int64]string{}
	for id, name := range rec.CollectionExportNames {
		cid, err := strconv.ParseInt(id, 10, 64)
		albumDir := filepath.Join(dir, name)
		fi, lerr := os.Lstat(albumDir)
		mi, merr := os.Lstat(filepath.Join(albumDir, desktopMetaDir))
		if err != nil || !isName(name) || name == folder.StateDir || lerr != nil || !fi.IsDir() || merr == nil && !mi.IsDir() {
			p.fail(filepath.Join(dir, desktopRecordName), 0, fmt.Errorf("album %s: %q is not a folder of this export", id, name))
			continue
		}
		folders[cid] = albumDir
		p.albums[cid] = exportAlbumOf(exportAlbum{ID: cid, AlbumName: name})
	}
	uids := make([]string, 0, len(rec.FileExportNames))
	for uid := range rec.FileExportNames {
		uids = append(uids, uid)
	}
	sort.Strings(uids)
	byID := map[int64]*original{}
	for _, uid := range uids {
		if err := p.readDesktopFile(ctx, uid, rec.FileExportNames[uid], folders, byID); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			p.fail(filepath.Join(dir, desktopRecordName), 0, fmt.Errorf("%s: %w", uid, err))
		}
	}
	p.finish(byID)
	return p, nil
}

// readDesktopFile adds one exported copy: the file id and album id of its
// record key, its parts by the recorded name.
func (p *plan) readDesktopFile(ctx context.Context, uid, name string, folders map[int64]string, byID map[int64]*original) error {
	f := strings.Split(uid, "_")
	if len(f) != 3 {
		return errors.New("not a file of this export")
	}
	id, err1 := strconv.ParseInt(f[0], 10, 64)
	cid, err2 := strconv.ParseInt(f[1], 10, 64)
	albumDir, ok := folders[cid]
	if err1 != nil || err2 != nil || !ok {
		return errors.New("not a file of an album of this export")
	}
	names := []string{name}
	var live struct{ Image, Video string }
	if json.Unmarshal([]byte(name), &live) == nil && live.Image != "" && live.Video != "" {
		names = []string{live.Image, live.Video}
	}
	if !isName(names[0]) {
		return fmt.Errorf("part name %q is not a name in its album folder", names[0])
	}
	var m desktopMeta
	if err := readJSONFile(filepath.Join(albumDir, desktopMetaDir, names[0]+".json"), &m); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			p.unread[id] = append(p.unread[id], cid) // a copy without its JSON: another may have it
			return nil
		}
		return err
	}
	ef, err := m.asExportFile(id, names)
	if err != nil {
		return err
	}
	return p.addCopy(ctx, albumDir, ef, cid, byID)
}

// asExportFile is the sidecar as Ente's CLI would have written it.
func (m *desktopMeta) asExportFile(id int64, names []string) (*exportFile, error) {
	ef := &exportFile{Title: m.Title}
	ef.Info.ID, ef.Info.FileNames = id, names
	taken := m.PhotoTakenTime
	if taken == nil {
		taken = m.CreationTime
	}
	var err error
	if ef.CreationTime, err = taken.rfc3339(); err != nil {
		return nil, fmt.Errorf("photoTakenTime: %w", err)
	}
	if ef.ModificationTime, err = m.ModificationTime.rfc3339(); err != nil {
		return nil, fmt.Errorf("modificationTime: %w", err)
	}
	if m.Caption != "" {
		ef.Description = &m.Caption
	}
	if g := m.GeoData; g != nil && (g.Latitude != 0 || g.Longitude != 0) {
		ef.Location = &struct {
			Latitude  float64 `json:"latitude"`
			Longitude float64 `json:"longitude"`
		}{g.Latitude, g.Longitude}
	}
	return ef, nil
}

// rfc3339 is a sidecar's time (seconds, quoted or not) in RFC 3339, or ""
// when there is none.
func (t *desktopTime) rfc3339() (string, error) {
	if t == nil || len(t.Timestamp) == 0 {
		return "", nil
	}
	s, err := strconv.ParseInt(string(bytes.Trim(t.Timestamp, `"`)), 10, 64)
	if err != nil {
		return "", err
	}
	return time.Unix(s, 0).UTC().Format(time.RFC3339), nil
}

// isName reports a name of one entry of a folder: nothing that leads
// elsewhere.
func isName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\\\x00")
}
