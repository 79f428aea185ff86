//go:build !unix

package stream

import "os"

// writableByUs reports whether the file at path is not read-only (the
// read-only attribute, which Go reports as a mode without write bits).
func writableByUs(path string) bool {
	st, err := os.Stat(path)
	return err != nil || st.Mode().Perm()&0o200 != 0
}
