package columnar

import (
	"fmt"
	"hash/crc32"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// Default decoded sizes of a Parquet row group and an Arrow IPC record batch
// when WriteOptions sets neither RowGroupRows nor RowGroupBytes. A row group
// is the unit of parallel reading; it is decoded in pieces, so its size does
// not set a reader's memory, only the writer's (one row group is buffered).
// IPC streams are read a record batch at a time, so their batches are kept
// smaller.
const (
	DefaultRowGroupBytes = 64 << 20
	DefaultIPCBatchBytes = 4 << 20
)

// groupLimits returns the rows (0: no row limit) and decoded bytes at which a
// writer in container k closes a row group or record batch.
func groupLimits(k kind, o stream.WriteOptions) (rows int, bytes int64) {
	bytes = o.RowGroupBytes
	switch {
	case bytes > 0:
	case o.RowGroupRows > 0:
		bytes = 1 << 62 // rows alone decide
	case k == kindParquet:
		bytes = DefaultRowGroupBytes
	default:
		bytes = DefaultIPCBatchBytes
	}
	return max(o.RowGroupRows, 0), bytes
}

// parquetCodecs are the Parquet compressions a writer takes, by name.
var parquetCodecs = map[string]compress.Compression{
	"": compress.Codecs.Zstd, "zstd": compress.Codecs.Zstd, "snappy": compress.Codecs.Snappy,
	"gzip": compress.Codecs.Gzip, "lz4": compress.Codecs.Lz4Raw, "brotli": compress.Codecs.Brotli,
	"none": compress.Codecs.Uncompressed, "uncompressed": compress.Codecs.Uncompressed,
}

// CheckCompression reports whether compression (WriteOptions.Compression)
// is one that output of the format (parquet, arrow, arrow-stream) takes, so
// a wrong name is found before any work.
func CheckCompression(format, compression string) error {
	c := strings.ToLower(compression)
	if format == kindParquet.String() {
		if _, ok := parquetCodecs[c]; !ok {
			return fmt.Errorf("Parquet compression %q is not one of zstd, snappy, gzip, lz4, brotli, none", compression)
		}
		return nil
	}
	switch c {
	case "", "none", "uncompressed", "zstd", "lz4":
		return nil
	}
	return fmt.Errorf("Arrow compression %q is not one of none, zstd, lz4", compression)
}

// sink writes records to a temporary file in one of the three containers and
// renames it into place on close.
type sink struct {
	af   *stream.AtomicFile
	kind kind
	pq   *pqarrow.FileWriter
	crc  *crcWriter // Parquet: the checksum of the row group being written
	crcs []string   // Parquet: the checksums of the row groups written
	ipc  interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
}

func newSink(path string, k kind, sc *arrow.Schema, o stream.WriteOptions) (*sink, error) {
	af, err := stream.CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	s := &sink{af: af, kind: k}
	// The container writers close what they write to; ProgressWriter hides
	// the temporary file's Close, which must stay open for Commit.
	c := strings.ToLower(o.Compression)
	switch k {
	case kindParquet:
		codec, ok := parquetCodecs[c]
		if !ok {
			err = fmt.Errorf("%s: %w", path, CheckCompression(k.String(), o.Compression))
			break
		}
		props := parquet.NewWriterProperties(parquet.WithCompression(codec),
			parquet.WithMaxRowGroupLength(1<<40), parquet.WithStats(true))
		s.crc = &crcWriter{w: af}
		s.pq, err = pqarrow.NewFileWriter(sc, stream.ProgressWriter{W: s.crc, P: o.Progress}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		s.crc.sum = 0 // the magic number is no row group's
	default:
		// Arrow IPC is uncompressed unless asked: its point is decoding at memory speed.
		opts := []ipc.Option{ipc.WithSchema(sc)}
		switch c {
		case "", "none", "uncompressed":
		case "zstd":
			opts = append(opts, ipc.WithZstd())
		case "lz4":
			opts = append(opts, ipc.WithLZ4())
		default:
			err = fmt.Errorf("%s: %w", path, CheckCompression(k.String(), o.Compression))
		}
		if err != nil {
			break
		}
		if k == kindArrow {
			s.ipc, err = ipc.NewFileWriter(stream.ProgressWriter{W: af, P: o.Progress}, opts...)
		} else {
			s.ipc = ipc.NewWriter(stream.ProgressWriter{W: af, P: o.Progress}, opts...)
		}
	}
	if err != nil {
		af.Abort()
		return nil, err
	}
	return s, nil
}

func (s *sink) write(rec arrow.RecordBatch) error {
	if s.pq != nil {
		// Each Write is one row group, written through when Write returns.
		if err := s.pq.Write(rec); err != nil {
			return err
		}
		s.crcs = append(s.crcs, fmt.Sprintf("%08x", s.crc.sum))
		s.crc.sum = 0
		return nil
	}
	return s.ipc.Write(rec)
}

// close finishes the container and renames the file into place.
func (s *sink) close() error {
	var err error
	if s.pq != nil {
		err = s.pq.AppendKeyValueMetadata(MetaRowGroupCRC, strings.Join(s.crcs, ","))
		if cerr := s.pq.Close(); err == nil {
			err = cerr
		}
	} else {
		err = s.ipc.Close()
	}
	if err != nil {
		s.af.Abort()
		return fmt.Errorf("writing %s: %w", s.af.Path(), err)
	}
	return s.af.Commit()
}

func (s *sink) abort() error { return s.af.Abort() }

// MetaRowGroupCRC is the key-value metadata of the Parquet files streamfit
// writes that holds a CRC-32C (Castagnoli) per row group, in hex, separated
// by commas: the checksum of the row group's bytes as stored (its column
// chunks, after compression). arrow-go writes no page checksums, so these
// stand in for them: a reader verifies a row group before decoding it, and
// a damaged page is an error whatever the compression (zstd would catch most
// damage, snappy and none nothing).
const MetaRowGroupCRC = "streamfit.rowgroup_crc32c"

// castagnoli is the CRC-32C table.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// crcWriter passes writes to w and adds them to a running CRC-32C.
type crcWriter struct {
	w   io.Writer
	sum uint32
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.sum = crc32.Update(c.sum, castagnoli, p[:n])
	return n, err
}
