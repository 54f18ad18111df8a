package clidocs

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// Write writes the Markdown reference of every command under root, under the heading title
// and a note that regenerate (`go generate ./cmd/topolayer`) rewrites it: depth first in
// the order `--help` lists them, in the layout of cobra's doc.GenMarkdownCustom (name,
// synopsis, usage, examples, options, inherited options, see also) gathered in one file,
// with links between sections. Hidden commands and help are left out.
//
// It does not call github.com/spf13/cobra/doc itself: that package imports go-md2man for
// man pages, which go.mod does not carry.
func Write(w io.Writer, title, regenerate string, root *cobra.Command) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s\n\n", title)
	fmt.Fprintf(&b, "<!-- Generated from the cobra commands by `%s`. Do not edit. -->\n\n", regenerate)
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		writeCommandDoc(&b, c)
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
				visit(sub)
			}
		}
	}
	root.InitDefaultHelpCmd()
	visit(root)
	_, err := w.Write(b.Bytes())
	return err
}

func writeCommandDoc(b *bytes.Buffer, c *cobra.Command) {
	c.InitDefaultHelpFlag()
	name := c.CommandPath()
	fmt.Fprintf(b, "## %s\n\n%s\n\n", name, c.Short)
	if c.Long != "" {
		fmt.Fprintf(b, "### Synopsis\n\n%s\n\n", strings.TrimSpace(c.Long))
	}
	if c.Runnable() {
		fmt.Fprintf(b, "```\n%s\n```\n\n", c.UseLine())
	}
	if c.Example != "" {
		fmt.Fprintf(b, "### Examples\n\n```\n%s\n```\n\n", strings.TrimRight(c.Example, "\n"))
	}
	if flags := c.NonInheritedFlags(); flags.HasAvailableFlags() {
		fmt.Fprintf(b, "### Options\n\n```\n%s```\n\n", flags.FlagUsages())
	}
	if flags := c.InheritedFlags(); flags.HasAvailableFlags() {
		fmt.Fprintf(b, "### Options inherited from parent commands\n\n```\n%s```\n\n", flags.FlagUsages())
	}
	var also []string
	if c.HasParent() {
		p := c.Parent()
		also = append(also, fmt.Sprintf("* [%s](#%s) - %s", p.CommandPath(), anchor(p.CommandPath()), p.Short))
	}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() && !sub.IsAdditionalHelpTopicCommand() {
			also = append(also, fmt.Sprintf("* [%s](#%s) - %s", sub.CommandPath(), anchor(sub.CommandPath()), sub.Short))
		}
	}
	if len(also) > 0 {
		fmt.Fprintf(b, "### See also\n\n%s\n\n", strings.Join(also, "\n"))
	}
}

// anchor is the GitHub anchor of a "## topolayer plan" heading.
func anchor(heading string) string {
	return strings.ReplaceAll(strings.ToLower(heading), " ", "-")
}
