package models

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseBytes reads a size such as 2G, 512M, 1.5GiB or 1000000 (bytes; K, M,
// G and T are powers of 1024, with or without a trailing B or iB).
func ParseBytes(s string) (int64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := 1.0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || math.IsInf(v*mult, 0) {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, optionally with K, M, G or T (e.g. 2G)", s)
	}
	return int64(v * mult), nil
}
