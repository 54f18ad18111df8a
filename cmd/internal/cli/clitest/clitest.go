// Package clitest runs the command trees of topolayer and topolayer-devenv in their tests.
package clitest

import (
	"bytes"
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
)

// Execute runs the command line args on the root command newRoot builds, under ctx, with an
// empty stdin, and returns what it wrote on stdout and stderr and its error.
func Execute(ctx context.Context, newRoot func(cli.IOStreams) *cobra.Command, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	root := newRoot(cli.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
	root.SetArgs(args)
	err = root.ExecuteContext(ctx)
	return out.String(), errOut.String(), err
}
