package stream

import "io"

// CountingReader counts the bytes read through it: a reader can report
// progress in bytes of the file while a decompressor sits above it.
type CountingReader struct {
	R io.Reader
	N int64
}

func (c *CountingReader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}

// ProgressWriter advances P (nil is fine) by the bytes written to W. It has
// only a Write method, so it also hides W's Close from writers that close
// what they write to.
type ProgressWriter struct {
	W io.Writer
	P *Progress
}

func (w ProgressWriter) Write(b []byte) (int, error) {
	n, err := w.W.Write(b)
	w.P.Add(0, int64(n))
	return n, err
}
