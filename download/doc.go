// Package download saves one Ente file: it fetches the encrypted object,
// decrypts and verifies it while it streams into a temp file in the
// caller's temp folder (on the destination's file system), and gives it
// its final name only once it is complete.
package download
