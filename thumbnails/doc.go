// Package thumbnails regenerates, encrypts and uploads thumbnails that
// Ente's server has lost.
package thumbnails
