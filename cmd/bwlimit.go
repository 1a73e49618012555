package cmd

import (
	"fmt"
	"strconv"
	"strings"
)

// bwlimit is --bwlimit RATE: bytes a second, with rclone's binary
// suffixes (10M is 10 MiB/s); 0 or "off" for none.
type bwlimit int64

func (b *bwlimit) String() string {
	if *b == 0 {
		return "off"
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *bwlimit) Type() string { return "RATE" }

func (b *bwlimit) Set(s string) error {
	n, err := parseRate(s)
	if err != nil {
		return err
	}
	*b = bwlimit(n)
	return nil
}

// parseRate reads "10M", "512K", "1.5G", "800" (bytes a second, suffixes
// powers of 1024, an optional trailing "B" or "/s"), "0" or "off".
func parseRate(s string) (int64, error) {
	v := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "/s"), "B")
	if v == "off" || v == "" {
		return 0, nil
	}
	mult := 1.0
	switch v[len(v)-1] {
	case 'k', 'K':
		mult = 1 << 10
	case 'm', 'M':
		mult = 1 << 20
	case 'g', 'G':
		mult = 1 << 30
	}
	if mult > 1 {
		v = v[:len(v)-1]
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f*mult > 1<<50 {
		return 0, fmt.Errorf("%q is not a rate: write bytes a second such as 10M, 512K or 800", s)
	}
	n := int64(f * mult)
	if f > 0 && n < 1024 {
		return 0, fmt.Errorf("%q is below 1K a second", s)
	}
	return n, nil
}
