package verify

import (
	"github.com/quak-photos/quak/download/folder"
)

// noteDamage keeps a file found missing or changed for the folder's
// record: what quak status reports and the next backup downloads again.
// A mismatch is not damage (its bytes are what was downloaded, and
// downloading again gives them back), nor is an extra or unlinked file.
func (v *verifier) noteDamage(p Problem) {
	if p.Kind == Missing || p.Kind == Changed {
		v.damaged = append(v.damaged, folder.Damage{FileID: p.FileID, Kind: string(p.Kind), Path: p.Path})
	}
}

// record writes what this run found into the folder's record of the last
// verify, keeping damage found earlier in files this run did not check.
func (v *verifier) record(f *folder.Folder) error {
	return f.WriteVerify(&folder.VerifyRecord{Checked: v.sum.Checked, Total: v.sum.Total, Time: v.o.Now().UTC(),
		Damaged: append([]folder.Damage{}, v.damaged...)}, v.checked)
}
