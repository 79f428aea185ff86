package statsfile_test

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/streamfit/streamfit/implicit/statsfile"
)

// A statistics file frames a payload, here a few bytes, with a header that
// says what the statistics describe; Read checks every checksum before it
// returns the payload.
func Example() {
	h := statsfile.Header{Model: "gmm", Phase: 1, D: 4, K: 2, Shards: 1}
	var file bytes.Buffer
	err := statsfile.Write(context.Background(), &file, &h, func(zw io.Writer) error {
		_, err := zw.Write([]byte("the accumulators' own encoding"))
		return err
	})
	if err != nil {
		panic(err)
	}
	data := file.Bytes()
	err = statsfile.Read(bytes.NewReader(data), int64(len(data)), func(h *statsfile.Header) error {
		fmt.Printf("%s statistics of pass %d, d=%d, k=%d\n", h.Model, h.Phase, h.D, h.K)
		return nil
	}, func(zr io.Reader) error {
		body, err := io.ReadAll(zr)
		fmt.Printf("payload: %s\n", body)
		return err
	})
	fmt.Println("error:", err)

	data[len(data)-statsfile.Trailer-1] ^= 1 // damage the payload
	err = statsfile.Read(bytes.NewReader(data), int64(len(data)), func(*statsfile.Header) error { return nil }, func(zr io.Reader) error {
		_, err := io.ReadAll(zr)
		return err
	})
	fmt.Println("damaged:", err != nil)
	// Output:
	// gmm statistics of pass 1, d=4, k=2
	// payload: the accumulators' own encoding
	// error: <nil>
	// damaged: true
}
