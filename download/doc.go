// Package download saves one Ente file: it fetches the encrypted object,
// decrypts and verifies it while it streams, and gives it its final name only
// once it is complete.
package download
