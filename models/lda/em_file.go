package lda

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/streamfit/streamfit/implicit"
	"github.com/streamfit/streamfit/implicit/statsfile"
)

// EMStats is a statistics file of one EM pass of a topic model over a
// shard, or over merged shards: the header (Model implicit.EMModel; Phase the pass,
// counted from 1; Basis the fingerprint of the model the pass started
// from; D, K, VocabHash, Inputs, Shards as for the other phases; Params the
// model's kind and the EM settings the statistics depend on) and the pass's
// exact statistics. Merges refuse statistics of another model, pass or
// settings, and shards that share an input. The payload is the
// accumulator's encoding (EMAcc.Encode), in the statistics file layout
// (magic, version, checksummed header, zstd payload, checksum).
type EMStats struct {
	Header statsfile.Header
	Acc    *EMAcc
}

// Merge adds the statistics of o (another shard of the same pass over the
// same model) to s, exactly.
func (s *EMStats) Merge(o *EMStats) error {
	if err := s.Header.Compatible(o.Header); err != nil {
		return err
	}
	if err := s.Header.Disjoint(o.Header); err != nil {
		return err
	}
	if err := s.Acc.Merge(o.Acc); err != nil {
		return err
	}
	s.Header.AddShards(o.Header)
	return nil
}

// Encode writes s in the statistics file format to w.
func (s *EMStats) Encode(ctx context.Context, w io.Writer) error {
	if s.Header.Model != implicit.EMModel {
		return fmt.Errorf("%w: EM statistics of model %q", statsfile.ErrModel, s.Header.Model)
	}
	return statsfile.Write(ctx, w, &s.Header, func(zw io.Writer) error { return s.Acc.Encode(zw) })
}

// WriteEMStats writes s to path atomically (see implicit.WriteTopicStats).
func WriteEMStats(ctx context.Context, path string, s *EMStats) error {
	return statsfile.Create(ctx, path, s.Encode)
}

// ReadEMStats reads the statistics file of an EM pass, verifying magic,
// version, lengths and checksums.
func ReadEMStats(path string) (*EMStats, error) {
	return statsfile.Open(path, decodeEMStats)
}

// DecodeEMStats parses the statistics file of an EM pass held in data.
func DecodeEMStats(data []byte) (*EMStats, error) {
	return decodeEMStats(bytes.NewReader(data), int64(len(data)))
}

func decodeEMStats(r io.ReaderAt, size int64) (*EMStats, error) {
	s := &EMStats{}
	err := statsfile.Read(r, size, func(h *statsfile.Header) error {
		s.Header = *h
		if s.Header.Model != implicit.EMModel {
			return fmt.Errorf("%w: %s statistics where an EM pass's are read", statsfile.ErrModel, s.Header.Model)
		}
		return nil
	}, func(zr io.Reader) (err error) {
		s.Acc, err = DecodeEMAcc(zr)
		if err == nil && (s.Acc.D != s.Header.D || s.Acc.K != s.Header.K) {
			err = fmt.Errorf("EM statistics of d=%d, k=%d under a header of d=%d, k=%d", s.Acc.D, s.Acc.K, s.Header.D, s.Header.K)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}
