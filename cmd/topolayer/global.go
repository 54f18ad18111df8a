package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/go-logr/logr"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/topolayer/topolayer/cmd/internal/cli"
)

// GlobalOptions are the flags every command takes, as kubectl's are: given before or after
// the command's name. A command that talks to a cluster declares its own --kubeconfig and
// --context (with its topology's meaning); cobra lets that local flag take the value, so
// `topolayer --kubeconfig K plan …` and `topolayer plan --kubeconfig K …` are the same.
type GlobalOptions struct {
	Kubeconfig string // --kubeconfig
	Context    string // --context
	Verbosity  int    // -v
}

// addGlobalFlags adds the global flags to root, and sets the libraries' loggers from -v
// before any command runs.
func addGlobalFlags(root *cobra.Command, streams IOStreams) {
	g := &GlobalOptions{}
	f := root.PersistentFlags()
	f.StringVar(&g.Kubeconfig, "kubeconfig", g.Kubeconfig, "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config); used by the commands that talk to a cluster")
	f.StringVar(&g.Context, "context", g.Context, "kubeconfig context (default: the current context); used by the commands that talk to a cluster")
	f.IntVarP(&g.Verbosity, "v", "v", g.Verbosity, "log verbosity of the libraries topolayer uses (client-go, controller-runtime): 0 shows none of their logs, 1 and more show them")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if cmd.Annotations[cli.AnnotationDaemon] == "true" {
			return nil // run sets its own logger, from --log-format and -v
		}
		v := g.Verbosity
		if fl := cmd.Flags().Lookup("v"); fl != nil && fl.Changed {
			fmt.Sscan(fl.Value.String(), &v)
		}
		setLibraryLoggers(streams.ErrOut, v)
		return nil
	}
}

// setLibraryLoggers gives klog and controller-runtime a logger, so that neither prints a
// stack trace asking for one (controller-runtime's "log.SetLogger(...) was never called")
// nor writes its own lines between a command's: at verbosity 0 their logs are discarded (the
// command reports every failure itself), from 1 they go to w.
func setLibraryLoggers(w io.Writer, verbosity int) {
	log := logr.Discard()
	if verbosity > 0 {
		if l, err := newLogger(w, "console", verbosity); err == nil {
			log = l
		}
	}
	klog.SetLogger(log)
	ctrl.SetLogger(log)
}

// unknownCommand is the usage error of an argument that names no subcommand of cmd, with
// cobra's suggestions.
func unknownCommand(cmd *cobra.Command, arg string) error {
	msg := fmt.Sprintf("unknown command %q for %q", arg, cmd.CommandPath())
	if s := cmd.SuggestionsFor(arg); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return cli.AsUsage(errors.New(msg))
}

// suggestSubcommands makes every command with subcommands refuse an argument that names
// none, with suggestions, as a usage error; a parent that does nothing itself prints its
// help.
func suggestSubcommands(c *cobra.Command) {
	if c.HasSubCommands() {
		if c.SuggestionsMinimumDistance <= 0 {
			c.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
		}
		args := c.Args
		c.Args = func(cmd *cobra.Command, a []string) error {
			if len(a) > 0 && (args == nil || args(cmd, a) != nil) {
				return unknownCommand(cmd, a[0])
			}
			if args != nil {
				return args(cmd, a)
			}
			return nil
		}
		if !c.Runnable() {
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	for _, sub := range c.Commands() {
		suggestSubcommands(sub)
	}
}

// flagError makes a flag error a usage error, suggesting the closest flag for an unknown one.
func flagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "unknown flag: --")
	if !ok {
		return cli.AsUsage(err)
	}
	var best []string
	min := 3
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := distance(name, f.Name)
		if strings.HasPrefix(f.Name, name) && d > 1 {
			d = 1
		}
		switch {
		case d < min:
			min, best = d, []string{"--" + f.Name}
		case d == min:
			best = append(best, "--"+f.Name)
		}
	})
	if len(best) == 0 {
		return cli.AsUsage(err)
	}
	sort.Strings(best)
	return cli.UsageErrorf("%s\n\nDid you mean this?\n\t%s", msg, strings.Join(best, "\n\t"))
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// completeFlagValues registers, in every command under root, the completion of the flags
// whose values are a fixed list: -o (its values are the ones its help lists after "output
// format: "), --preserve-policy and --log-format.
func completeFlagValues(root *cobra.Command) {
	fixed := map[string][]string{
		"preserve-policy": preservePolicies,
		"log-format":      {"console", "json"},
	}
	var visit func(c *cobra.Command)
	visit = func(c *cobra.Command) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			values := fixed[f.Name]
			if f.Name == "output" {
				values = outputFormats(f.Usage)
			}
			if len(values) > 0 {
				_ = c.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp))
			}
		})
		for _, sub := range c.Commands() {
			visit(sub)
		}
	}
	visit(root)
}

// outputFormats are the formats an -o flag's help lists: "output format: a|b|c …".
func outputFormats(usage string) []string {
	rest, ok := strings.CutPrefix(usage, "output format: ")
	if !ok {
		return nil
	}
	list, _, _ := strings.Cut(rest, " ")
	var out []string
	for _, v := range strings.Split(list, "|") {
		if v = strings.TrimRight(v, ",;"); v != "" {
			out = append(out, v)
		}
	}
	return out
}
