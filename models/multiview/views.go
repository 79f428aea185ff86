package multiview

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseViews reads a description of the views: "0,1,2;3,4;5,6" gives the
// three column groups (Config.Views), "" the default split (equal, or
// random with Config.RandomViews), and "rotate" the default split after a
// random rotation of the rows (Config.Rotate; 004 Prop 3.3, spherical
// Gaussian mixtures).
func ParseViews(s string) (views [][]int, rotate bool, err error) {
	switch strings.TrimSpace(s) {
	case "":
		return nil, false, nil
	case "rotate":
		return nil, true, nil
	}
	for _, g := range strings.Split(s, ";") {
		var cols []int
		for _, c := range strings.Split(g, ",") {
			j, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || j < 0 {
				return nil, false, fmt.Errorf("%q is not a column index (want groups like \"0,1,2;3,4;5,6\", or \"rotate\")", c)
			}
			cols = append(cols, j)
		}
		views = append(views, cols)
	}
	if len(views) != 3 {
		return nil, false, fmt.Errorf("want three groups separated by ';', got %d", len(views))
	}
	return views, false, nil
}
