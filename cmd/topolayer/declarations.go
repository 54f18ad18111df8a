package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/mitchellh/go-wordwrap"

	"github.com/topolayer/topolayer/internal/translate/declare"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// writeDeclarations writes, after a table's rejected entries, the configuration snippet that
// would place them (translate.Engine.Declarations), clearly marked as a proposal to review,
// its notes and privileges, and the entries no declaration places. Nothing when d is nil.
func writeDeclarations(w io.Writer, p *plans.Plan, d *declare.Declarations) error {
	if d.Empty() {
		return nil
	}
	snippet, err := d.YAML()
	if err != nil {
		return err
	}
	var b strings.Builder
	if snippet != nil {
		b.WriteString("\nDECLARATIONS: review before adding. This configuration snippet would place the rejected entries that a\n" +
			"declaration can place; topolayer neither applies it nor writes it to the configuration. Merge each item into\n" +
			"the item of the same name under operators[] and policy.operators[] of the configuration, or add it:\n\n")
		for _, l := range strings.Split(strings.TrimSuffix(string(snippet), "\n"), "\n") {
			b.WriteString("    " + l + "\n")
		}
		if len(d.Notes) > 0 {
			b.WriteString("\n")
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	for _, n := range d.Notes {
		if err := writeBullet(w, "note: "+n); err != nil {
			return err
		}
	}
	if len(d.Privileges) > 0 {
		if _, err := fmt.Fprintf(w, "\nPRIVILEGES (%d): the snippet grants these; add them only if the operator must have them\n", len(d.Privileges)); err != nil {
			return err
		}
		for _, g := range d.Privileges {
			if err := writeBullet(w, g); err != nil {
				return err
			}
		}
	}
	if len(d.Unplaceable) == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nCANNOT BE PLACED (%d): no declaration places these entries; the snippet leaves them out\n", len(d.Unplaceable)); err != nil {
		return err
	}
	for _, u := range d.Unplaceable {
		heading := fmt.Sprintf("#%d %s", u.Entry, objectName(u.Source))
		if u.Entry >= 0 && u.Entry < len(p.Entries) {
			e := p.Entries[u.Entry]
			heading = fmt.Sprintf("#%d %s %s %s", u.Entry, e.Class, e.Action, objectName(u.Source))
		}
		if err := writeFailure(w, heading, u.Reason); err != nil {
			return err
		}
	}
	return nil
}

// writeBullet writes text as one item of a list, "- " and then the text wrapped to the
// table's width, its later lines indented under the first.
func writeBullet(w io.Writer, text string) error {
	lines := strings.Split(wordwrap.WrapString(oneLine(text), tableWidth-2), "\n")
	_, err := io.WriteString(w, "- "+strings.Join(lines, "\n  ")+"\n")
	return err
}
