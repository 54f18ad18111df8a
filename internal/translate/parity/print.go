package parity

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/topolayer/topolayer/contract"
)

// WriteTable writes the report as text: one line per object (outcome, standalone object ->
// hosted object), its differences in aligned columns below it (where, standalone -> hosted,
// why), and the one-line count last.
func (r *Report) WriteTable(w io.Writer) error {
	for _, o := range r.Objects {
		if _, err := fmt.Fprintf(w, "%s %s -> %s\n", strings.ToUpper(string(o.Outcome)), side(o.Standalone), hostedSide(o)); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		for _, d := range o.Differences {
			fmt.Fprintf(tw, "    %s\t%s\t%s\n", where(d), changeOf(d), causes(d))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "\nparity: %s\n", r.Summary)
	return err
}

// WriteMarkdown writes the report as a Markdown document: the count, a table of objects, and
// a table of differences per object that has some.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	title := "Parity report"
	if r.Operator != "" {
		title += ": " + r.Operator
	}
	fmt.Fprintf(&b, "# %s\n\n**%s**\n\n", title, r.Summary)
	b.WriteString("| outcome | standalone | hosted |\n|---|---|---|\n")
	for _, o := range r.Objects {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", o.Outcome, mdCode(side(o.Standalone)), mdCode(hostedSide(o)))
	}
	for _, o := range r.Objects {
		if len(o.Differences) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n## %s\n\n%s\n\n| where | standalone → hosted | why |\n|---|---|---|\n", mdText(o.Source.String()), o.Outcome)
		for _, d := range o.Differences {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", mdCode(where(d)), mdText(Shorten(d.Standalone, valueWidth)+" → "+Shorten(d.Hosted, valueWidth)), mdText(causes(d)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func side(o *Object) string {
	if o == nil {
		return "-"
	}
	return o.Cluster + ": " + objectName(o.Identity)
}

func hostedSide(o ObjectReport) string {
	if o.Hosted != nil {
		return side(o.Hosted)
	}
	return "(" + string(o.Outcome) + ")"
}

// where names the part of an object d is in: its aspect, and its path when it has one.
func where(d Difference) string {
	if d.Path == "" {
		return string(d.Aspect)
	}
	return string(d.Aspect) + " " + d.Path
}

func changeOf(d Difference) string {
	return Shorten(d.Standalone, valueWidth) + " -> " + Shorten(d.Hosted, valueWidth)
}

func causes(d Difference) string {
	parts := make([]string, len(d.Causes))
	for i, c := range d.Causes {
		parts[i] = c.String()
	}
	return strings.Join(parts, "; ")
}

// valueWidth is how many runes of a value the reports print.
const valueWidth = 80

// Shorten keeps a printed value to one line of at most max runes: its line breaks written
// as \n, and a longer value cut to end in "…". The parity reports print values with it, and
// so does internal/fixtureparity.
func Shorten(s string, max int) string {
	s = strings.ReplaceAll(s, "\n", `\n`)
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

// objectName prints an identity as kubectl does: resource.group/[ns/]name.
func objectName(id contract.Identity) string {
	gr := id.GroupResource().String()
	return gr + "/" + identityName(id)
}

func mdCode(s string) string { return "`" + strings.ReplaceAll(s, "`", "'") + "`" }

func mdText(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
