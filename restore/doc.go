// Package restore puts a quak backup back into an Ente account, each
// original exactly once: what the target already has is added to its
// albums, never uploaded again, and every upload is journaled before it is
// sent, so that a retry or a later run resends what was sent and never
// makes a second file.
package restore
