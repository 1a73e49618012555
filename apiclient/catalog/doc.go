// Package catalog decrypts what Ente lists: albums (their keys and names)
// and file entries (keys, metadata, and the public edits that override it).
package catalog
