package state

import (
	"strings"

	"github.com/quak-photos/quak/apiclient"
	"github.com/quak-photos/quak/apiclient/catalog"
)

// Collection is an album as the backup knows it.
type Collection struct {
	ID      int64  `json:"id"`
	Name    string `json:"name"`
	Folder  string `json:"folder"` // folder name under DIR
	Type    string `json:"type"`
	OwnerID int64  `json:"ownerID"`
	// Visibility is the album's when it was last listed (0 visible, 1
	// archived, 2 hidden), for the filters of a run that does not list it.
	Visibility int  `json:"visibility,omitempty"`
	Deleted    bool `json:"deleted,omitempty"`
	// Pruned: a deleted album whose folder quak moved to the trash.
	Pruned bool `json:"pruned,omitempty"`
	// Cursor is the sinceTime up to which every file is saved or recorded.
	Cursor int64 `json:"cursor"`
	// Seen is the album's updationTime when it was last listed to the end:
	// a listing that shows another time (later, or earlier: museum sets it
	// back when a file commits late) lists the album again.
	Seen int64 `json:"seen,omitempty"`
	// TakeoutHash is the SHA-256 (hex) of the Takeout metadata.json quak
	// last wrote in the album's folder: one that no longer holds it is the
	// user's. Empty when quak wrote none, or in records of older quaks.
	TakeoutHash string `json:"takeoutHash,omitempty"`
}

// Status is a file's outcome.
type Status string

// File statuses.
const (
	Saved        Status = "saved"
	HashMismatch Status = "hash-mismatch" // saved; its bytes are not what its metadata claims
	Failed       Status = "failed"        // not saved; retried first next run
	// Skipped: not downloaded because the run's filters left it out; kept
	// with its diff entry so a wider run fetches it without re-listing.
	Skipped Status = "skipped"
)

// Entry is a file's place in one album folder: its name there and the names
// of every part (a live photo has two).
type Entry struct {
	Name    string   `json:"name"`
	Parts   []string `json:"parts"`
	Deleted bool     `json:"deleted,omitempty"` // removed or trashed on the server; the local copy is kept
	// Copy: the parts were copied from another album's, not hard-linked
	// (the file system could not link).
	Copy bool `json:"copy,omitempty"`
	// Stale: the copy still holds older content than the file's record
	// (refreshing it from another album's copy failed); each run tries
	// again, and nothing links to it meanwhile.
	Stale bool `json:"stale,omitempty"`
	// Meta is what this album's copy and sidecar reflect; each album's copy
	// is brought up to date when that album's diff reports the edit.
	Meta catalog.Meta `json:"meta"`
	// Updated is the updationTime of the listing entry this copy reflects,
	// so an entry listed again (the overlap behind the cursor) is not
	// applied twice; 0 in records of older quaks.
	Updated int64 `json:"updated,omitempty"`
	// Sidecars are the XMP and Takeout files quak wrote beside this copy's
	// parts (names in the album folder): the only ones beside them it
	// rewrites, moves or removes. A file of such a name that is not listed
	// is someone else's.
	Sidecars []string `json:"sidecars,omitempty"`
	// SidecarHashes maps a name in Sidecars to the SHA-256 (hex) of the
	// bytes quak last wrote there: a file that no longer holds them was
	// rewritten by another tool and is the user's. Names recorded by older
	// quaks have none.
	SidecarHashes map[string]string `json:"sidecarHashes,omitempty"`
}

// File is one Ente file and where the backup keeps it.
type File struct {
	ID      int64        `json:"id"`
	OwnerID int64        `json:"ownerID"`
	Header  string       `json:"header"` // file.decryptionHeader: a new one means new content
	Size    int64        `json:"size"`   // ciphertext bytes
	Meta    catalog.Meta `json:"meta"`
	// LocalHash is the BLAKE2b-512 (base64) of the bytes written, as Meta.Hash
	// is written: "image:video" for a live photo. It differs from Meta.Hash
	// only for a HashMismatch file; empty in records of older quaks. A live
	// photo whose archive held only one usable part has "image:<hash>" or
	// "video:<hash>".
	LocalHash string `json:"localHash,omitempty"`
	Status    Status `json:"status"`
	Error     string `json:"error,omitempty"`
	// Entries maps collection id to the file's place in that album folder.
	Entries map[int64]*Entry `json:"entries"`
	// Pending is the diff entry of a failed file, so the next run can retry
	// it first, before listing anything; PendingAlso, its entries in other
	// albums whose listings showed it while it was failing, so it lands in
	// each of them.
	Pending     *apiclient.File   `json:"pending,omitempty"`
	PendingAlso []*apiclient.File `json:"pendingAlso,omitempty"`
	// View is the file's place in the date view, if it has one.
	View *View `json:"view,omitempty"`
	// Trash lists the album copies --prune moved to the trash, so a file
	// that comes back is moved back rather than downloaded.
	Trash []TrashCopy `json:"trash,omitempty"`
}

// View is a file's place in the date view: hard links to its parts (copies
// where the file system refuses links).
type View struct {
	Folder string   `json:"folder"` // relative to the date view
	Parts  []string `json:"parts"`
	Title  string   `json:"title"`  // the title the names were made from
	Header string   `json:"header"` // the content the links are to
	Copy   bool     `json:"copy,omitempty"`
	// Sidecars are the sidecar links quak made beside the parts (names in
	// the date folder); SidecarHashes, the SHA-256 (hex) of what each held
	// when quak linked it: one that no longer holds it was rewritten by
	// another tool and is the user's. Older records have none.
	Sidecars      []string          `json:"sidecars,omitempty"`
	SidecarHashes map[string]string `json:"sidecarHashes,omitempty"`
}

// TrashCopy is an album copy in the trash: the album it left and where
// its parts and sidecars went, relative to the backup folder.
type TrashCopy struct {
	CollectionID int64    `json:"collectionID"`
	Parts        []string `json:"parts"`
	Sidecar      string   `json:"sidecar,omitempty"`
	// XMP and Takeout are where each part's XMP and Takeout sidecar went
	// ("" for a part without one), when any went.
	XMP     []string `json:"xmp,omitempty"`
	Takeout []string `json:"takeout,omitempty"`
}

// PartHashes are the hashes (base64 BLAKE2b-512) f's parts were written
// with, in the order of an entry's parts, or nil when they are unknown.
func PartHashes(f *File) []string {
	h := f.LocalHash
	if h == "" {
		h = f.Meta.Hash
	}
	if catalog.IsLivePhoto(f.Meta) {
		for _, lone := range []string{"image:", "video:"} {
			if rest, ok := strings.CutPrefix(h, lone); ok {
				return []string{rest} // an archive that held only one usable part
			}
		}
		img, vid, ok := catalog.SplitLiveHash(h)
		if !ok {
			return nil
		}
		return []string{img, vid}
	}
	return []string{h}
}
