// Package views keeps the files a backup holds beside its originals for
// other photo tools: the JSON sidecar of each album copy in <album>/.meta/
// (with album_meta.json), the XMP and Takeout sidecars beside each part,
// Takeout's album metadata.json, and the date view, a second tree of hard
// links by date. Keeper is its one entry: the backup hands it what it uses
// (the folder, the state, the disk it writes through, the names saved
// files took, a function that records) and calls it as files are placed
// and committed. The originals' bytes are never touched.
package views
