package state

import (
	"syscall"

	bolt "go.etcd.io/bbolt"
)

// release takes the database's pages a pass has read out of this
// process's memory: they stay in the page cache, to be read again at no
// cost, but the run's resident memory no longer grows with the library.
// It runs inside tx, so the mapping cannot move meanwhile; the mapping is
// shared and read-only, so a page dropped reads back as it was.
func release(tx *bolt.Tx) {
	info := tx.DB().Info()
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, info.Data, uintptr(tx.Size()), syscall.MADV_DONTNEED)
}
