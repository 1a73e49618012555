package configdir

import (
	"errors"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/quak-photos/quak/apiclient/account"
)

// foldersVersion is the format of the folder list.
const foldersVersion = 1

// Folder is a backup folder and the account it belongs to. It holds no
// secret: the keys stay in the session file.
type Folder struct {
	Dir      string `json:"dir"` // absolute
	Email    string `json:"email"`
	Endpoint string `json:"endpoint"`
}

// Folders is the list of backup folders quak backs up with --all.
type Folders struct {
	List []Folder
}

type foldersFile struct {
	Version int      `json:"version"`
	Folders []Folder `json:"folders"`
}

// LoadFolders reads the folder list at path; a missing file is an empty
// list.
func LoadFolders(path string) (*Folders, error) {
	var f foldersFile
	err := readVersioned(path, &f, func() int { return f.Version }, foldersVersion)
	if errors.Is(err, fs.ErrNotExist) {
		return &Folders{}, nil
	}
	if err != nil {
		return nil, err
	}
	return &Folders{List: f.Folders}, nil
}

// Save writes the list to path atomically (mode 0600), sorted by account
// then folder.
func (f *Folders) Save(path string) error {
	sort.SliceStable(f.List, func(i, j int) bool {
		a, b := f.List[i], f.List[j]
		if !strings.EqualFold(a.Email, b.Email) {
			return strings.ToLower(a.Email) < strings.ToLower(b.Email)
		}
		return a.Dir < b.Dir
	})
	list := f.List
	if list == nil {
		list = []Folder{}
	}
	return writePrivate(path, foldersFile{Version: foldersVersion, Folders: list})
}

// Get returns the entry of the absolute folder dir, or nil.
func (f *Folders) Get(dir string) *Folder {
	dir = filepath.Clean(dir)
	for i := range f.List {
		if f.List[i].Dir == dir {
			return &f.List[i]
		}
	}
	return nil
}

// Set records that dir (absolute) belongs to email on endpoint and reports
// whether that changed anything.
func (f *Folders) Set(dir, email, endpoint string) bool {
	dir = filepath.Clean(dir)
	if e := f.Get(dir); e != nil {
		if strings.EqualFold(e.Email, email) && account.SameEndpoint(e.Endpoint, endpoint) {
			return false
		}
		e.Email, e.Endpoint = email, endpoint
		return true
	}
	f.List = append(f.List, Folder{Dir: dir, Email: email, Endpoint: endpoint})
	return true
}

// Forget drops dir from the list and reports whether it was there.
func (f *Folders) Forget(dir string) bool {
	dir = filepath.Clean(dir)
	for i := range f.List {
		if f.List[i].Dir == dir {
			f.List = append(f.List[:i], f.List[i+1:]...)
			return true
		}
	}
	return false
}

// Of returns the folders of email on endpoint.
func (f *Folders) Of(email, endpoint string) []Folder {
	var out []Folder
	for _, e := range f.List {
		if strings.EqualFold(e.Email, email) && account.SameEndpoint(e.Endpoint, endpoint) {
			out = append(out, e)
		}
	}
	return out
}
