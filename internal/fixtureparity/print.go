package fixtureparity

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/topolayer/topolayer/internal/translate/parity"
)

// WriteSummary writes the report for a person: per variant, each pair's counts, the leaves
// each reason explains, each unexplained leaf, and the variant's one-line count with the
// share of the fixture Deployment's leaves that are equal.
func (r *Report) WriteSummary(w io.Writer) error {
	for i, v := range r.Variants {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "VARIANT %s\n", v.Variant)
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "PAIR\tFIXTURE\tPLACED\tLEAVES\tEQUAL\tEXPLAINED\tMISSING\tEXTRA\tDIFFERENT")
		for _, o := range v.Objects {
			c := o.Counts
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\n", o.Pair, o.Fixture, placedName(o), c.Leaves, c.Equal, c.Explained, c.Missing, c.Extra, c.Different)
		}
		reasons := map[string]int{}
		for _, o := range v.Objects {
			for _, l := range o.Leaves {
				if l.Status != Equal && l.Reason != "" {
					name, _, _ := strings.Cut(l.Reason, ":")
					reasons[name]++
				}
			}
		}
		if len(reasons) > 0 {
			fmt.Fprintln(tw, "\nREASON\tLEAVES")
			names := make([]string, 0, len(reasons))
			for n := range reasons {
				names = append(names, n)
			}
			slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(reasons[b], reasons[a]), cmp.Compare(a, b)) })
			for _, n := range names {
				fmt.Fprintf(tw, "%s\t%d\n", n, reasons[n])
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if n := v.Counts.Unexplained(); n > 0 {
			fmt.Fprintf(w, "\nUNEXPLAINED (%d)\n", n)
			tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
			for _, o := range v.Objects {
				for _, l := range o.Leaves {
					if !l.Explained() {
						fmt.Fprintf(tw, "  %s\t%s\t%s\t%s -> %s\n", o.Pair, l.Status, l.Path, parity.Shorten(l.Fixture, valueWidth), parity.Shorten(l.Placed, valueWidth))
					}
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if len(v.Unpaired) > 0 {
			fmt.Fprintf(w, "\nnot compared (no pair): %s\n", strings.Join(v.Unpaired, ", "))
		}
		if _, err := fmt.Fprintf(w, "\n%s\n", v.Line()); err != nil {
			return err
		}
	}
	return nil
}

// WriteWide writes every leaf of every pair: its path, status, both values and its reason.
func (r *Report) WriteWide(w io.Writer) error {
	for i, v := range r.Variants {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "VARIANT %s\n", v.Variant)
		for _, o := range v.Objects {
			fmt.Fprintf(w, "%s: %s (%s) -> %s\n", o.Pair, o.Fixture, o.FixtureFile, placedName(o))
			tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
			for _, l := range o.Leaves {
				why := l.Reason
				if !l.Explained() {
					why = "UNEXPLAINED"
				}
				fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\t%s\n", l.Status, l.Path, parity.Shorten(l.Fixture, valueWidth), parity.Shorten(l.Placed, valueWidth), why)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
		if _, err := fmt.Fprintf(w, "\n%s\n", v.Line()); err != nil {
			return err
		}
	}
	return nil
}

// Line is the variant's one-line count: "fixture parity default: 144 fixture leaves, ...;
// Deployment 16.0% equal".
func (v VariantReport) Line() string {
	return fmt.Sprintf("fixture parity %s: %s; Deployment %.1f%% equal", v.Variant, v.Counts, v.DeploymentEqual)
}

func placedName(o ObjectReport) string {
	if o.Placed == "" {
		return "(none)"
	}
	return o.Placed
}

// valueWidth is how many runes of a value the reports print.
const valueWidth = 60
