package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A table of named columns for --out: the text formats of infer's shares
// (CSV, TSV, JSON Lines by the extension of --out, "-" for standard output
// as CSV, or --out-format), written atomically through the same sink.

// tableCell is one value: a number (JSON number, shortest float text) or a
// string.
type tableCell struct {
	s     string
	num   float64
	isNum bool
}

func numCell(v float64) tableCell { return tableCell{num: v, isNum: true} }
func intCell(v int) tableCell     { return numCell(float64(v)) }
func strCell(s string) tableCell  { return tableCell{s: s} }

func (c tableCell) text() string {
	if c.isNum {
		return strconv.FormatFloat(c.num, 'g', -1, 64)
	}
	return c.s
}

// writeTable writes header and rows to out in its format (shareFormat);
// Parquet is infer's alone. A file is written whole or not at all.
func writeTable(out, format string, stdout io.Writer, header []string, rows [][]tableCell) error {
	f, err := shareFormat(out, format)
	if err != nil {
		return err
	}
	if f == "parquet" {
		return usagef("--out %s: this table is written as .csv, .tsv or .jsonl (or - for standard output)", out)
	}
	sink, err := openSink(out, stdout)
	if err != nil {
		return err
	}
	if err := encodeTable(sink.w, f, header, rows); err != nil {
		sink.abort()
		return fmt.Errorf("%s: %w", sink.name, err)
	}
	return sink.commit()
}

func encodeTable(w io.Writer, format string, header []string, rows [][]tableCell) error {
	switch format {
	case "jsonl":
		enc := json.NewEncoder(w)
		for _, r := range rows {
			var b strings.Builder
			b.WriteByte('{')
			for i, c := range r {
				if i > 0 {
					b.WriteByte(',')
				}
				k, _ := json.Marshal(header[i])
				b.Write(k)
				b.WriteByte(':')
				v, err := json.Marshal(c.s)
				if c.isNum {
					v, err = json.Marshal(c.num)
				}
				if err != nil {
					return err
				}
				b.Write(v)
			}
			b.WriteByte('}')
			if err := enc.Encode(json.RawMessage(b.String())); err != nil {
				return err
			}
		}
		return nil
	default:
		cw := csv.NewWriter(w)
		if format == "tsv" {
			cw.Comma = '\t'
		}
		if err := cw.Write(header); err != nil {
			return err
		}
		rec := make([]string, len(header))
		for _, r := range rows {
			for i, c := range r {
				rec[i] = c.text()
			}
			if err := cw.Write(rec); err != nil {
				return err
			}
		}
		cw.Flush()
		return cw.Error()
	}
}
