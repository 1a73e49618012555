// Package sidecars renders the metadata files other photo tools read beside
// each saved original (XMP packets for digiKam, darktable and Immich; Google
// Takeout's JSON for immich-go and Ente's own importer) and names the
// folders of the date view. It never touches the originals.
package sidecars
