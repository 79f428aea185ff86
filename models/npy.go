package models

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// npyMagic starts every NumPy .npy file.
const npyMagic = "\x93NUMPY"

var (
	npyDescr   = regexp.MustCompile(`'descr'\s*:\s*'([<>=|])(f[48])'`)
	npyFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// ReadNPY reads a k×d matrix of float32 or float64 values in C (row-major)
// order from a NumPy .npy file (format versions 1 to 3), such as
// numpy.save("topics.npy", gensim_lda.get_topics()). Rows are returned as
// written; other element types, Fortran order and shapes that are not two
// dimensional are errors naming the file.
func ReadNPY(path string) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%s: not a k×d .npy matrix: %s", path, fmt.Sprintf(format, a...))
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:6]) != npyMagic {
		return nil, bad("no NumPy magic")
	}
	var hlen int
	switch head[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, bad("truncated header")
		}
		hlen = int(binary.LittleEndian.Uint16(b[:]))
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return nil, bad("truncated header")
		}
		hlen = int(binary.LittleEndian.Uint32(b[:]))
	default:
		return nil, bad("format version %d.%d", head[6], head[7])
	}
	if hlen > 1<<20 {
		return nil, bad("header of %d bytes", hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, bad("truncated header")
	}
	h := string(hb)
	m := npyDescr.FindStringSubmatch(h)
	if m == nil {
		return nil, bad("element type in %q is not float32 or float64", strings.TrimSpace(h))
	}
	var order binary.ByteOrder = binary.LittleEndian
	if m[1] == ">" {
		order = binary.BigEndian
	}
	size := 8
	if m[2] == "f4" {
		size = 4
	}
	if fo := npyFortran.FindStringSubmatch(h); fo == nil || fo[1] != "False" {
		return nil, bad("Fortran order (save a C-ordered array: numpy.ascontiguousarray)")
	}
	sm := npyShape.FindStringSubmatch(h)
	if sm == nil {
		return nil, bad("no shape in %q", strings.TrimSpace(h))
	}
	var shape []int
	for _, s := range strings.Split(sm[1], ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, bad("shape (%s)", sm[1])
		}
		shape = append(shape, n)
	}
	if len(shape) != 2 {
		return nil, bad("shape (%s) is not two dimensional", sm[1])
	}
	k, d := shape[0], shape[1]
	if int64(k) > 1<<40/int64(d) {
		return nil, bad("shape (%d, %d) is too large", k, d)
	}
	if st, err := f.Stat(); err == nil {
		want := int64(len(head)) + int64(hlen) + int64(k)*int64(d)*int64(size)
		if head[6] == 1 {
			want += 2
		} else {
			want += 4
		}
		if st.Size() != want {
			return nil, bad("%d bytes, but a %d×%d matrix of %d-byte values needs %d", st.Size(), k, d, size, want)
		}
	}
	rows := make([][]float64, k)
	buf := make([]byte, d*size)
	for i := range rows {
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, fmt.Errorf("%s: row %d: %w", path, i, err)
		}
		row := make([]float64, d)
		for j := range row {
			if size == 4 {
				row[j] = float64(math.Float32frombits(order.Uint32(buf[4*j:])))
			} else {
				row[j] = math.Float64frombits(order.Uint64(buf[8*j:]))
			}
		}
		rows[i] = row
	}
	return rows, nil
}
