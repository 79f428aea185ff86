package columnar

import (
	"encoding/base64"
	"fmt"
	"io"

	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/streamfit/streamfit/stream"
)

// newStreamReader opens an Arrow IPC stream of size bytes (0 when unknown:
// a pipe) read from r. No message may be larger than the file: arrow-go's
// NewReader sets no limit on a message's body, so a damaged length made it
// allocate tens of gigabytes and the runtime end the process (an out of
// memory error is not a panic that can be recovered).
func newStreamReader(r io.Reader, size int64, opts ...ipc.Option) (*ipc.Reader, error) {
	limits := []ipc.Option{ipc.WithBodySizeLimit(size), ipc.WithMetadataSizeLimit(size)}
	if size <= 0 {
		limits = nil // arrow-go's own limits
	}
	return ipc.NewReaderFromMessageReader(ipc.NewMessageReader(&checkedMessages{r: r}, append(limits, opts...)...), opts...)
}

// openParquet reads the footer of the Parquet file f and checks what
// pqarrow would trust in it without a check.
func openParquet(f stream.File, opts ...file.ReadOption) (*file.Reader, error) {
	pr, err := file.NewParquetReader(f, opts...)
	if err != nil {
		return nil, err
	}
	if err := checkStoredSchema(pr.MetaData()); err != nil {
		pr.Close()
		return nil, err
	}
	return pr, nil
}

// storedSchemaKey is the footer key under which Arrow writers store the
// table's Arrow schema, base64 of an IPC schema message.
const storedSchemaKey = "ARROW:schema"

// checkStoredSchema refuses a damaged Arrow schema in the footer's
// metadata. pqarrow decodes it with the message length it holds and no
// limit: a flipped bit there asked for 34 GB and the process died.
func checkStoredSchema(md *metadata.FileMetaData) error {
	v := md.KeyValueMetadata().FindValue(storedSchemaKey)
	if v == nil {
		return nil
	}
	// The decodings pqarrow tries: padded, then unpadded.
	var dec []byte
	var err error
	if len(*v)%4 == 0 {
		dec, err = base64.StdEncoding.DecodeString(*v)
	}
	if len(dec) == 0 || err != nil {
		dec, err = base64.RawStdEncoding.DecodeString(*v)
	}
	if err != nil {
		return fmt.Errorf("the footer's %s metadata is not base64 (%v): the footer is damaged", storedSchemaKey, err)
	}
	if err := checkSchemaMessage(dec); err != nil {
		return fmt.Errorf("the footer's %s metadata does not decode (%v): the footer is damaged", storedSchemaKey, err)
	}
	return nil
}

// size is the size of f, 0 when it cannot be told (no limit then).
func size(f stream.File) int64 {
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		return st.Size()
	}
	return 0
}
