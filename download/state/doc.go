// Package state keeps what a backup folder holds and how far each album has
// been synced, in DIR/.quak/state.db (bbolt: one writer, transactions). A
// page of files and its album's cursor are written in one transaction, so a
// crash at any moment loses nothing and the next run resumes. The records'
// form is this package's own (record.go, diffentry.go): a change to another
// package's types changes no byte of state.db.
package state
