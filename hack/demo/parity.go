package main

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/translate/parity"
)

// writeParitySummary writes an operator's parity in a few lines: its counts, then one line
// per kind of cause naming each rule or transform with the number of objects it changed
// (most first), then each unexplained difference in full.
func writeParitySummary(w io.Writer, r *parity.Report) {
	fmt.Fprintf(w, "  %-22s %s\n", r.Operator, r.Summary)
	objects := map[parity.CauseKind]map[string]int{}
	var unexplained []string
	for _, o := range r.Objects {
		seen := map[parity.Cause]bool{}
		for _, d := range o.Differences {
			for _, c := range d.Causes {
				if c.Kind == parity.CauseUnexplained {
					unexplained = append(unexplained, fmt.Sprintf("%s %s: %s", o.Source, d.Path, c))
					continue
				}
				k := parity.Cause{Kind: c.Kind, By: c.By}
				if seen[k] {
					continue
				}
				seen[k] = true
				if objects[c.Kind] == nil {
					objects[c.Kind] = map[string]int{}
				}
				objects[c.Kind][cmp.Or(c.By, "-")]++
			}
		}
	}
	for _, kind := range slices.Sorted(maps.Keys(objects)) {
		by := objects[kind]
		rules := slices.SortedFunc(maps.Keys(by), func(a, b string) int {
			return cmp.Or(by[b]-by[a], strings.Compare(a, b))
		})
		parts := make([]string, len(rules))
		for i, rule := range rules {
			parts[i] = fmt.Sprintf("%s %d", rule, by[rule])
		}
		fmt.Fprintf(w, "    %-20s %s\n", string(kind)+":", strings.Join(parts, ", "))
	}
	for _, u := range unexplained {
		fmt.Fprintf(w, "    unexplained: %s\n", u)
	}
}
