package main

import (
	"context"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/client-go/util/jsonpath"

	"github.com/topolayer/topolayer/cmd/internal/cli"
)

// VersionInfo is what `topolayer version` reports: the module's version and the VCS
// revision it was built from, as the Go toolchain recorded them in the binary.
type VersionInfo struct {
	// Module is the main module's path.
	Module string `json:"module"`
	// Version is the module's version: a tag, a pseudo-version, or "(devel)" for a build
	// from a work tree.
	Version string `json:"version"`
	// Revision, Time and Modified describe the VCS commit of the work tree the binary was
	// built from (empty when it was built without VCS information).
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified,omitempty"`
	// GoVersion is the Go toolchain that built the binary.
	GoVersion string `json:"goVersion"`
}

// VersionOptions are the options of `topolayer version`.
type VersionOptions struct {
	Output string // -o: "", json, yaml or jsonpath=TEMPLATE
	Client bool   // --client: kubectl's; topolayer asks no server, so the output is the same

	jsonPath *jsonpath.JSONPath

	// buildInfo reads the binary's build information; tests replace it.
	buildInfo func() (*debug.BuildInfo, bool)
	IOStreams
}

// NewCmdVersion builds `topolayer version`.
func NewCmdVersion(streams IOStreams) *cobra.Command {
	o := &VersionOptions{buildInfo: debug.ReadBuildInfo, IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version and VCS revision topolayer was built from",
		Long: `Version prints the version of the topolayer binary and the VCS revision it was built from.
topolayer has no server part and version asks no cluster: --client, kubectl's flag, is
accepted and changes nothing.`,
		Example: `  topolayer version
  topolayer version --client -o json
  topolayer version -o jsonpath={.version}`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: json|yaml|jsonpath= (default: one line)")
	cmd.Flags().BoolVar(&o.Client, "client", o.Client, "print the client's version only (topolayer asks no server: the same output)")
	return cmd
}

// Validate checks the output format, and parses a jsonpath template.
func (o *VersionOptions) Validate() error {
	switch {
	case o.Output == "", o.Output == "json", o.Output == "yaml":
		return nil
	case strings.HasPrefix(o.Output, jsonPathFormat):
		jp, err := newJSONPath(o.Output)
		o.jsonPath = jp
		return err
	}
	return cli.UsageErrorf("--output %q: must be json, yaml or jsonpath=TEMPLATE", o.Output)
}

// Run prints the version.
func (o *VersionOptions) Run(context.Context) error {
	v := o.info()
	if printed, err := printData(o.Out, o.Output, v); printed || err != nil {
		return err
	}
	if o.jsonPath != nil {
		return printJSONPath(o.Out, o.jsonPath, v)
	}
	line := fmt.Sprintf("topolayer %s", v.Version)
	if v.Revision != "" {
		line += ", revision " + v.Revision
		if v.Modified {
			line += " (modified)"
		}
		if v.Time != "" {
			line += " of " + v.Time
		}
	}
	_, err := fmt.Fprintf(o.Out, "%s, %s\n", line, v.GoVersion)
	return err
}

// info reads the version from the binary's build information.
func (o *VersionOptions) info() VersionInfo {
	bi, ok := o.buildInfo()
	if !ok {
		return VersionInfo{Module: "github.com/topolayer/topolayer", Version: "unknown", GoVersion: "unknown"}
	}
	v := VersionInfo{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if v.Version == "" {
		v.Version = "(devel)"
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.Time = s.Value
		case "vcs.modified":
			v.Modified = s.Value == "true"
		}
	}
	return v
}
