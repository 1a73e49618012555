// Package verify re-reads a backup folder and checks every saved file
// against the BLAKE2b-512 hash recorded when it was written (Ente's own
// content hash): missing files, changed bytes (bit rot, edits), files in
// album folders that quak did not put there, and album copies whose hard
// link to the others was broken.
package verify
