// Package secretstream implements libsodium's
// crypto_secretstream_xchacha20poly1305 as Ente uses it: a streaming
// decrypting reader that only ever releases authenticated plaintext and
// proves the stream complete, and the matching encryptor.
package secretstream
