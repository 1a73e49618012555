package publink

import (
	"errors"
	"fmt"
)

// alphabet is Bitcoin's base58 alphabet, the one npm's bs58 uses: no 0, O,
// I or l.
const alphabet = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"

// maxBase58 bounds what DecodeBase58 accepts: decoding is quadratic in the
// length, and a key needs at most 44 characters.
const maxBase58 = 256

// digit maps a character to its base58 value, or -1.
var digit = func() [256]int8 {
	var d [256]int8
	for i := range d {
		d[i] = -1
	}
	for i := 0; i < len(alphabet); i++ {
		d[alphabet[i]] = int8(i)
	}
	return d
}()

// ErrBase58 reports text that is not base58.
var ErrBase58 = errors.New("not base58")

// EncodeBase58 writes b in base58. Each leading zero byte becomes a leading
// '1', so the length of b survives a round trip.
func EncodeBase58(b []byte) string {
	zeros := 0
	for zeros < len(b) && b[zeros] == 0 {
		zeros++
	}
	// Base 256 to base 58, most significant digit first.
	var digits []byte
	for _, v := range b[zeros:] {
		carry := int(v)
		for i := len(digits) - 1; i >= 0; i-- {
			carry += int(digits[i]) << 8
			digits[i] = byte(carry % 58)
			carry /= 58
		}
		for carry > 0 {
			digits = append([]byte{byte(carry % 58)}, digits...)
			carry /= 58
		}
	}
	out := make([]byte, zeros+len(digits))
	for i := 0; i < zeros; i++ {
		out[i] = '1'
	}
	for i, d := range digits {
		out[zeros+i] = alphabet[d]
	}
	return string(out)
}

// DecodeBase58 reads base58 text. Each leading '1' is a leading zero byte.
// Text longer than 256 characters, or with a character outside the
// alphabet, is refused with an error wrapping ErrBase58 that names the
// position, never the character.
func DecodeBase58(s string) ([]byte, error) {
	if len(s) > maxBase58 {
		return nil, fmt.Errorf("%w: %d characters, more than %d", ErrBase58, len(s), maxBase58)
	}
	zeros := 0
	for zeros < len(s) && s[zeros] == '1' {
		zeros++
	}
	// Base 58 to base 256, most significant byte first.
	var num []byte
	for i := zeros; i < len(s); i++ {
		d := digit[s[i]]
		if d < 0 {
			return nil, fmt.Errorf("%w: character %d is outside the alphabet", ErrBase58, i+1)
		}
		carry := int(d)
		for j := len(num) - 1; j >= 0; j-- {
			carry += int(num[j]) * 58
			num[j] = byte(carry)
			carry >>= 8
		}
		for carry > 0 {
			num = append([]byte{byte(carry)}, num...)
			carry >>= 8
		}
	}
	return append(make([]byte, zeros, zeros+len(num)), num...), nil
}
