package ndarray_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/streamfit/streamfit/stream"
)

// A .npy file, as np.save(path, X) writes it for X of shape (3, 2), read
// through the registry as dense samples.
func Example() {
	dir, _ := os.MkdirTemp("", "npy")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "train.npy")
	header := "{'descr': '<i8', 'fortran_order': False, 'shape': (3, 2), }"
	for (10+len(header)+1)%64 != 0 {
		header += " "
	}
	b := append([]byte("\x93NUMPY\x01\x00"), byte(len(header)+1), 0)
	b = append(b, header+"\n"...)
	for _, v := range []int64{1, 2, 3, 4, 5, 6} {
		b = append(b, byte(v), 0, 0, 0, 0, 0, 0, 0)
	}
	os.WriteFile(path, b, 0o644)

	src, err := stream.OpenDense(path, stream.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	info := src.Info()
	fmt.Println(info.Format, info.Rows, "rows of", info.Cols)
	for b, err := range src.Rows(context.Background()) {
		if err != nil {
			fmt.Println(err)
			return
		}
		for i := range b.Rows {
			fmt.Println(b.Row(i))
		}
		b.Release()
	}
	// Output:
	// npy 3 rows of 2
	// [1 2]
	// [3 4]
	// [5 6]
}
