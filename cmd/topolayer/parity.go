package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/fixtureparity"
	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// ParityOptions are the options of `topolayer parity`.
type ParityOptions struct {
	StandaloneConfig    string // --config-standalone
	HostedConfig        string // --config-hosted
	From                string // --from
	OutputResourcesFile string // --output-resources
	Operator            string // --operator
	Output              string // -o
	// HostedControlPlaneFile is --hosted-control-plane: the HostedControlPlane the hosted
	// configuration's hypershift profile reads, offline.
	HostedControlPlaneFile string
	// HyperShiftFixtures is --hypershift-fixtures: a directory of HyperShift's own rendering
	// of the operand (one variant's fixture files). With it, parity compares the hosted
	// placement with those objects, leaf field by leaf field, instead of with the standalone
	// placement.
	HyperShiftFixtures string

	print         func(io.Writer, *parity.Report) error
	printFixtures func(io.Writer, *fixtureparity.Report) error

	IOStreams
}

// parityPrinters are the formats of -o: table is the summary, wide every object and
// difference.
var parityPrinters = map[string]func(io.Writer, *parity.Report) error{
	"table":    writeParitySummary,
	"wide":     func(w io.Writer, r *parity.Report) error { return r.WriteTable(w) },
	"markdown": func(w io.Writer, r *parity.Report) error { return r.WriteMarkdown(w) },
	"json":     func(w io.Writer, r *parity.Report) error { return printJSON(w, r) },
	"yaml":     func(w io.Writer, r *parity.Report) error { return printYAML(w, r) },
}

// writeParitySummary writes the report's summary: the objects of each resource per outcome,
// the differences each rule made, then each unexplained difference and each rejected object
// in full (those are what fail the command), and the one-line count last.
func writeParitySummary(w io.Writer, r *parity.Report) error {
	outcomes := []parity.Outcome{parity.Identical, parity.RenamedOnly, parity.Transformed, parity.Absorbed, parity.Dropped, parity.Rejected, parity.Unexplained}
	var resources []string
	perResource := map[string]map[parity.Outcome]int{}
	type rule struct{ kind, by string }
	var rules []rule
	diffs, objects := map[rule]int{}, map[rule]int{}
	for _, o := range r.Objects {
		res := resourceType(o.Source)
		if perResource[res] == nil {
			perResource[res] = map[parity.Outcome]int{}
			resources = append(resources, res)
		}
		perResource[res][o.Outcome]++
		seen := map[rule]bool{}
		for _, d := range o.Differences {
			for _, c := range d.Causes {
				k := rule{string(c.Kind), c.By}
				if _, ok := diffs[k]; !ok {
					rules = append(rules, k)
				}
				diffs[k]++
				if !seen[k] {
					seen[k] = true
					objects[k]++
				}
			}
		}
	}
	slices.Sort(resources)
	slices.SortFunc(rules, func(a, b rule) int { return strings.Compare(a.kind+"\x00"+a.by, b.kind+"\x00"+b.by) })
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	header := []string{"RESOURCE"}
	for _, o := range outcomes {
		header = append(header, strings.ToUpper(string(o)))
	}
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, res := range resources {
		row := []string{res}
		for _, o := range outcomes {
			row = append(row, fmt.Sprint(perResource[res][o]))
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if len(rules) > 0 {
		fmt.Fprintln(tw, "\nCAUSE\tBY\tDIFFERENCES\tOBJECTS")
		for _, k := range rules {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", k.kind, dash(k.by), diffs[k], objects[k])
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	unexplained, rejected := 0, 0
	for _, o := range r.Objects {
		for _, d := range o.Differences {
			if !d.Explained() {
				unexplained++
			}
		}
		if o.Outcome == parity.Rejected {
			rejected++
		}
	}
	if unexplained > 0 {
		fmt.Fprintf(w, "\nUNEXPLAINED (%d): differences no rule accounts for\n", unexplained)
		for _, o := range r.Objects {
			for _, d := range o.Differences {
				if d.Explained() {
					continue
				}
				where := string(d.Aspect)
				if d.Path != "" {
					where += " " + d.Path
				}
				if err := writeFailure(w, objectName(o.Source)+": "+where, d.Standalone+" -> "+d.Hosted); err != nil {
					return err
				}
			}
		}
	}
	if rejected > 0 {
		fmt.Fprintf(w, "\nREJECTED (%d): the hosted plan writes nothing\n", rejected)
		for _, o := range r.Objects {
			if o.Outcome != parity.Rejected {
				continue
			}
			var why []string
			for _, d := range o.Differences {
				for _, c := range d.Causes {
					if c.Kind == parity.CauseRejected {
						why = append(why, c.String())
					}
				}
			}
			if err := writeFailure(w, objectName(o.Source), why...); err != nil {
				return err
			}
		}
	}
	_, err := fmt.Fprintf(w, "\nparity: %s\n", r.Summary)
	return err
}

// fixturePrinters are the formats of -o with --hypershift-fixtures: table is the summary,
// wide every leaf.
var fixturePrinters = map[string]func(io.Writer, *fixtureparity.Report) error{
	"table": func(w io.Writer, r *fixtureparity.Report) error { return r.WriteSummary(w) },
	"wide":  func(w io.Writer, r *fixtureparity.Report) error { return r.WriteWide(w) },
	"json":  func(w io.Writer, r *fixtureparity.Report) error { return printJSON(w, r) },
	"yaml":  func(w io.Writer, r *fixtureparity.Report) error { return printYAML(w, r) },
}

func parityPrinterNames() string { return formatNames(parityPrinters) }

func formatNames[P any](printers map[string]P) string {
	names := make([]string, 0, len(printers))
	for n := range printers {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

// NewCmdParity builds `topolayer parity`.
func NewCmdParity(streams IOStreams) *cobra.Command {
	o := &ParityOptions{Output: "table", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "parity (--config-standalone FILE | --hypershift-fixtures DIR) --config-hosted FILE --from DIR --operator NAME",
		Short: "Compare the standalone and the hosted placement of an operator's outputs, object by object",
		Long: `Parity translates one operator output directory twice, with a standalone and with a hosted
configuration, folds each plan into the final state of every object it writes, and compares
the two object by object, matched by standalone identity. Every difference is attributed to
the rule that made it: placed on another cluster, renamed into a simulated namespace,
shadowed kind, absorbed, reference rewritten, transformed (naming the transform), identity
recorded, owner added. A count of objects identical, renamed only, transformed and absorbed
ends the report.

No difference may be unexplained: one that no rule accounts for is reported as
"unexplained" and parity exits non-zero; so does a plan with a rejected entry, as plan
does. Nothing is read from or written to any cluster.

The default view is a summary: objects per resource and outcome, differences per cause and
rule, then each unexplained difference and rejected object in full. -o wide lists every
object and difference; -o markdown, json and yaml are for pull requests and scripts.

With --hypershift-fixtures DIR, parity compares the hosted placement (with
--hosted-control-plane, the HostedControlPlane the fixtures were rendered for) with
HyperShift's own rendering of the operand: the fixture files directly in DIR (one variant),
such as the oauth-openshift fixtures of HyperShift's component test. Each fixture object is
paired with the object the operator writes for it (the Deployment, the OsinServerConfig
parsed from its ConfigMap's data key, the audit policy, the session and template Secrets,
the PodDisruptionBudget), both are flattened to leaf fields (lists keyed by name, volume
mounts by mount path), and each leaf is equal, or missing, extra or different for a reason
of the committed table (internal/fixtureparity/reasons.yaml), or unexplained. -o table sums
up per pair and reason and lists the unexplained leaves, -o wide lists every leaf, -o json
and yaml are for scripts; any unexplained leaf, or a rejected entry, fails the command.

The final state of an object is what its mutations establish starting from nothing, folded
in lifecycle order (create, update, apply, patch, status, delete); apply merges without a
schema, so both sides are folded the same way and only the placement differs.`,
		Example: `  # The parity of the sample operator's outputs, as a table
  topolayer parity --config-standalone examples/standalone.yaml --config-hosted examples/hosted.yaml \
    --from examples/outputs/sample-operator \
    --output-resources examples/outputs/sample-operator-output-resources.yaml --operator sample-operator

  # The same, as Markdown for a pull request or as JSON for a script
  topolayer parity --config-standalone examples/standalone.yaml --config-hosted examples/hosted.yaml \
    --from examples/outputs/sample-operator --operator sample-operator -o markdown

  # The real CAO's oauth-openshift Deployment (a corpus case), placed by the hosted example for
  # the HostedControlPlane of HyperShift's fixtures, against them; exit status 1 while a leaf
  # is unexplained
  sed 's/namespace: clusters-example/namespace: hcp-namespace/; s/hostedControlPlane: example/hostedControlPlane: hcp/' \
    examples/cluster-authentication-operator/hosted.yaml > /tmp/hosted-hcp.yaml
  topolayer parity --hypershift-fixtures ../shared/corpus/hypershift-oauth-openshift \
    --config-hosted /tmp/hosted-hcp.yaml --hosted-control-plane examples/cluster-authentication-operator/fixtures-hcp.yaml \
    --from ../shared/corpus/cluster-authentication-operator/test-data/apply-configuration/overall/oauth-server-creation-minimal/expected-output \
    --operator cluster-authentication-operator || test $? -eq 1`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	cmd.Flags().StringVar(&o.StandaloneConfig, "config-standalone", o.StandaloneConfig, "the standalone topology configuration (TopologyConfig)")
	cmd.Flags().StringVar(&o.HostedConfig, "config-hosted", o.HostedConfig, "the hosted topology configuration (TopologyConfig)")
	cmd.Flags().StringVar(&o.From, "from", o.From, "the operator's apply-configuration output directory")
	cmd.Flags().StringVar(&o.OutputResourcesFile, "output-resources", o.OutputResourcesFile, "the operator's output-resources document; undeclared mutations are rejected")
	cmd.Flags().StringVar(&o.Operator, "operator", o.Operator, "the operator's name (the hosted topology labels every object with it)")
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: "+parityPrinterNames())
	cmd.Flags().StringVar(&o.HyperShiftFixtures, "hypershift-fixtures", o.HyperShiftFixtures, "a directory of HyperShift's own rendering of the operand (one variant's fixture files): compare the hosted placement with it, leaf field by leaf field")
	cmd.Flags().StringVar(&o.HostedControlPlaneFile, "hosted-control-plane", o.HostedControlPlaneFile, "the HostedControlPlane (a YAML or JSON file) whose availability policy, node selector, tolerations, labels, annotations and release image the hosted configuration's hypershift profile reads")
	return cmd
}

// Complete chooses the printer.
func (o *ParityOptions) Complete() error {
	if o.HyperShiftFixtures != "" {
		p, ok := fixturePrinters[o.Output]
		if !ok {
			return cli.UsageErrorf("--output %q: must be one of %s with --hypershift-fixtures", o.Output, formatNames(fixturePrinters))
		}
		o.printFixtures = p
		return nil
	}
	p, ok := parityPrinters[o.Output]
	if !ok {
		return cli.UsageErrorf("--output %q: must be one of %s", o.Output, parityPrinterNames())
	}
	o.print = p
	return nil
}

// Validate checks the flags without side effects.
func (o *ParityOptions) Validate() error {
	if o.HyperShiftFixtures != "" {
		errs := requiredFlags([]flagValue{{"--config-hosted", o.HostedConfig}, {"--from", o.From}, {"--operator", o.Operator}})
		if o.StandaloneConfig != "" {
			errs = append(errs, cli.UsageErrorf("--config-standalone: not used with --hypershift-fixtures, which compares the hosted placement with HyperShift's own"))
		}
		return errors.Join(errs...)
	}
	return errors.Join(requiredFlags([]flagValue{
		{"--config-standalone", o.StandaloneConfig},
		{"--config-hosted", o.HostedConfig},
		{"--from", o.From},
		{"--operator", o.Operator},
	})...)
}

// Run translates the outputs with both configurations, prints the report, and fails when a
// difference is unexplained.
func (o *ParityOptions) Run(ctx context.Context) error {
	if o.HyperShiftFixtures != "" {
		return o.runFixtures(ctx)
	}
	if o.print == nil {
		return fmt.Errorf("--output %q was not completed", o.Output)
	}
	src := SourceOptions{From: o.From, OutputResourcesFile: o.OutputResourcesFile, Operator: o.Operator}

	src.ConfigFile = o.StandaloneConfig
	if err := src.load(ctx); err != nil {
		return fmt.Errorf("--config-standalone: %w", err)
	}
	if src.topo.Name() != plans.TopologyStandalone {
		return fmt.Errorf("--config-standalone %s: topology %s is not %s", o.StandaloneConfig, src.cfg.Topology.Type, config.Standalone)
	}
	se, err := src.topo.Engine(o.Operator, src.declared)
	if err != nil {
		return fmt.Errorf("--config-standalone %s: %w", o.StandaloneConfig, err)
	}
	_, htopo, err := loadTopology("--config-hosted", o.HostedConfig, o.HostedControlPlaneFile)
	if err != nil {
		return err
	}
	he, err := htopo.Engine(o.Operator, src.declared)
	if err != nil {
		return fmt.Errorf("--config-hosted %s: %w", o.HostedConfig, err)
	}
	sp, hp := se.Plan(src.out), he.Plan(src.out)
	report, err := parity.Compare(sp, hp, parity.OptionsFor(he))
	if err != nil {
		return fmt.Errorf("--from %s: %w", o.From, err)
	}
	if err := o.print(o.Out, report); err != nil {
		return err
	}
	// As plan does, a plan with a rejected entry fails: the operator's output cannot be
	// written in that topology, whatever the comparison says.
	errs := []error{report.Err()}
	for _, p := range []struct {
		flag string
		plan *plans.Plan
	}{{"--config-standalone", sp}, {"--config-hosted", hp}} {
		if err := rejectedSummary(p.plan); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", p.flag, err))
		}
	}
	return errors.Join(errs...)
}

// runFixtures places the outputs with the hosted configuration and compares the objects on
// the management cluster with HyperShift's fixtures; it fails when a leaf is unexplained or
// the plan rejects an entry.
func (o *ParityOptions) runFixtures(ctx context.Context) error {
	if o.printFixtures == nil {
		return fmt.Errorf("--output %q was not completed", o.Output)
	}
	fixtures, err := fixtureparity.ReadFixtureDir(o.HyperShiftFixtures)
	if err != nil {
		return fmt.Errorf("--hypershift-fixtures: %w", err)
	}
	src := SourceOptions{ConfigFile: o.HostedConfig, From: o.From, OutputResourcesFile: o.OutputResourcesFile,
		Operator: o.Operator, HostedControlPlaneFile: o.HostedControlPlaneFile}
	if err := src.load(ctx); err != nil {
		return fmt.Errorf("--config-hosted: %w", err)
	}
	if src.topo.Name() != plans.TopologyHosted {
		return fmt.Errorf("--config-hosted %s: topology %s is not %s", o.HostedConfig, src.cfg.Topology.Type, config.Hosted)
	}
	plan, err := src.plan()
	if err != nil {
		return err
	}
	placed, err := parity.FinalState(plan)
	if err != nil {
		return fmt.Errorf("--from %s: %w", o.From, err)
	}
	asWritten(placed, src.topo)
	v := fixtureparity.Compare(o.HyperShiftFixtures, fixtures, placed, fixtureparity.DefaultPairs(), fixtureparity.DefaultReasons())
	report := fixtureparity.NewReport(v)
	if err := o.printFixtures(o.Out, report); err != nil {
		return err
	}
	errs := []error{report.Err()}
	if err := rejectedSummary(plan); err != nil {
		errs = append(errs, fmt.Errorf("--config-hosted: %w", err))
	}
	return errors.Join(errs...)
}

// asWritten makes the placed objects what the management target writes: those it writes
// whole in the HCP namespace (apply.OwnedByHostedControlPlane) get the HostedControlPlane's
// ownerReference, as HyperShift's own objects carry one. Without the HostedControlPlane
// (--hosted-control-plane) they are left as planned.
func asWritten(placed []parity.Object, topo *topology.Topology) {
	owner := topo.Owner()
	hcp, ok := topo.HostedControlPlane()
	if owner == nil || !ok {
		return
	}
	for i := range placed {
		p := &placed[i]
		if p.Cluster != routing.ClusterManagement || p.Body == nil || p.Identity.Namespace == "" {
			continue // only namespaced objects are owned
		}
		obj := &unstructured.Unstructured{Object: p.Body}
		if apply.OwnedByHostedControlPlane(slices.ContainsFunc(p.Actions, apply.WritesWhole), p.Identity.Namespace, obj.GetKind(), hcp.Namespace) {
			apply.SetOwner(obj, owner)
		}
	}
}
