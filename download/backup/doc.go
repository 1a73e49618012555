// Package backup brings a local folder up to date with everything an Ente
// account can see: each new file downloaded once, decrypted and verified as
// it streams, and only then given its final name; albums as folders, other
// album entries as hard links, metadata edits applied without downloading,
// and every step recorded so an interrupted run resumes.
//
// Run is a short pipeline over collaborators that each take what they use
// (the state, the disk every change goes through, the names taken, the
// tally that counts and tells, the function that commits) and none of
// which holds another back: the lister walks the listing and hands each
// page to the pager, which asks the placer (or, in a dry run, the
// pretender), the updater and the adopter; the pruner moves what the
// server deleted to the trash; package views keeps the sidecars and the
// date view.
package backup
