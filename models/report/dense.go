package report

import (
	"fmt"

	"github.com/streamfit/streamfit/models"
)

// MaxColumns is the most columns (dimensions) a heat map embeds; wider
// matrices show their first MaxColumns columns and say so.
const MaxColumns = 200

// Panel is one chart of the page: a heat map of a matrix or bars of a vector.
type Panel struct {
	// Type is "heatmap" or "bars".
	Type  string `json:"type"`
	Title string `json:"title"`
	// Note explains the chart (orientation, what was left out).
	Note      string   `json:"note,omitempty"`
	RowLabels []string `json:"rows,omitempty"`
	ColLabels []string `json:"cols,omitempty"`
	// Values has one row for bars, else the matrix rows.
	Values [][]Num `json:"values"`
	// Diverging colours negative values apart from positive ones (a signed
	// matrix); otherwise the scale runs from the smallest to the largest value.
	Diverging bool `json:"diverging,omitempty"`
}

// bars is a bar chart of v with one label per value.
func bars(title, note string, labels []string, v []float64) Panel {
	return Panel{Type: "bars", Title: title, Note: note, ColLabels: labels, Values: [][]Num{nums(v)}}
}

// heat is a heat map of rows (each of equal length), cut to MaxColumns
// columns with a note saying so.
func heat(title, note string, rowLabels, colLabels []string, rows [][]float64, diverging bool) Panel {
	p := Panel{Type: "heatmap", Title: title, Note: note, RowLabels: rowLabels, ColLabels: colLabels, Diverging: diverging}
	for _, r := range rows {
		if len(r) > MaxColumns {
			r = r[:MaxColumns]
		}
		p.Values = append(p.Values, nums(r))
	}
	if len(p.ColLabels) > MaxColumns {
		p.ColLabels = p.ColLabels[:MaxColumns]
	}
	if len(rows) > 0 && len(rows[0]) > MaxColumns {
		p.Note = join(p.Note, fmt.Sprintf("The first %d of %d columns are shown.", MaxColumns, len(rows[0])))
	}
	return p
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// labels returns prefix+"0" … prefix+"n-1".
func labels(prefix string, n int) []string { return models.Labels(prefix, n) }

// section draws the section of a model (models.Reported) on d.
func (d *Data) section(s models.Section) {
	for _, c := range s.Charts {
		if c.Bars {
			d.Panels = append(d.Panels, bars(c.Title, c.Note, c.ColLabels, c.Values[0]))
		} else {
			d.Panels = append(d.Panels, heat(c.Title, c.Note, c.RowLabels, c.ColLabels, c.Values, c.Diverging))
		}
	}
	d.Notes = append(d.Notes, s.Notes...)
	d.Provenance = append(d.Provenance, s.Facts...)
	d.warn(s.Warnings)
}
