package columnar

import (
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/streamfit/streamfit/stream"
)

// DefaultRowGroupRows is the number of rows per Parquet row group or Arrow
// record batch when WriteOptions.RowGroupRows is unset: about 1.3M entries
// (~10 MB decoded) for typical documents, so the 2×workers groups a pass keeps
// in flight stay well under the 200 MB budget of a default pass.
const DefaultRowGroupRows = 16384

// sink writes records to a temporary file in one of the three containers and
// renames it into place on close.
type sink struct {
	af   *stream.AtomicFile
	kind kind
	pq   *pqarrow.FileWriter
	ipc  interface {
		Write(arrow.RecordBatch) error
		Close() error
	}
}

// writeOnly hides the temporary file's Close from the container writers, which
// close their sink: the file must stay open for Commit's sync and rename.
type writeOnly struct{ w io.Writer }

func (w writeOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

func newSink(path string, k kind, sc *arrow.Schema, o stream.WriteOptions) (*sink, error) {
	af, err := stream.CreateAtomic(path)
	if err != nil {
		return nil, err
	}
	s := &sink{af: af, kind: k}
	c := strings.ToLower(o.Compression)
	switch k {
	case kindParquet:
		codec, ok := map[string]compress.Compression{
			"": compress.Codecs.Zstd, "zstd": compress.Codecs.Zstd, "snappy": compress.Codecs.Snappy,
			"gzip": compress.Codecs.Gzip, "lz4": compress.Codecs.Lz4Raw, "brotli": compress.Codecs.Brotli,
			"none": compress.Codecs.Uncompressed, "uncompressed": compress.Codecs.Uncompressed,
		}[c]
		if !ok {
			err = fmt.Errorf("%s: Parquet compression %q is not one of zstd, snappy, gzip, lz4, brotli, none", path, o.Compression)
			break
		}
		props := parquet.NewWriterProperties(parquet.WithCompression(codec),
			parquet.WithMaxRowGroupLength(1<<40), parquet.WithStats(true))
		s.pq, err = pqarrow.NewFileWriter(sc, writeOnly{af}, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
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
			err = fmt.Errorf("%s: Arrow compression %q is not one of none, zstd, lz4", path, o.Compression)
		}
		if err != nil {
			break
		}
		if k == kindArrow {
			s.ipc, err = ipc.NewFileWriter(writeOnly{af}, opts...)
		} else {
			s.ipc = ipc.NewWriter(writeOnly{af}, opts...)
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
		return s.pq.Write(rec)
	}
	return s.ipc.Write(rec)
}

// close finishes the container and renames the file into place.
func (s *sink) close() error {
	var err error
	if s.pq != nil {
		err = s.pq.Close()
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
