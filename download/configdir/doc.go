// Package configdir keeps what quak remembers between runs in its config
// folder: the sessions (session.json: each account's token and keys, mode
// 0600 and refused when looser) and the backup folders registered to each
// account (folders.json). Each file is read, changed and written back
// atomically under a lock of its own, so two quaks at once lose nothing.
package configdir
