package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/mom/runner"
	"github.com/topolayer/topolayer/internal/translate/declare"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// PlanOptions are the options of `topolayer plan`.
type PlanOptions struct {
	SourceOptions
	ClusterOptions
	Output    string // -o
	NoHeaders bool   // --no-headers
	Diff      bool   // --diff
	NoHints   bool   // --no-hints

	printer planPrinter
	IOStreams
}

// NewCmdPlan builds `topolayer plan`.
func NewCmdPlan(streams IOStreams) *cobra.Command {
	o := &PlanOptions{Output: "table", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "plan --config FILE --from DIR",
		Short: "Show where every mutation of an operator's output directory would land, and why",
		Long: `Plan reads an operator's apply-configuration output directory and shows, for every
mutation, the target cluster and identity it would have, the rule that placed it, and its
disposition: apply, absorbed, dropped or rejected. Nothing is written anywhere.

The table has one row per entry: its index in the plan (#, as in -o json), cluster,
namespace, resource.group/name, disposition and rule, in at most 160 columns (one table per
resource when a single one would be wider; names are never cut). -o wide adds the class,
action, source and transforms; -o name lists the objects written; --no-headers leaves the
rows alone on stdout. The summary, the warnings (grouped, one line each, whole with -o wide)
and each rejected entry (once, with its file, reason and a hint) follow the rows. An output
directory with neither mutations nor controller-results.yaml is refused.

When entries are rejected for want of a declaration (written under Unspecified, undeclared
in their class, or privileged objects the policy does not list), plan then prints the
configuration snippet that would place them (operators[].supplements.outputs, with a name
pattern for an indexed family, and policy.operators[].privileged), marked "review before
adding": what each privilege grants and on which cluster, and which entries no declaration
places (what the shared management cluster's allow-list refuses). It is never applied nor
written to the configuration; -o json and yaml carry it as "declarations"; --no-hints leaves
it out, with the rejected entries' hints.

With --output-resources, a mutation that the operator did not declare for its class is
rejected. Plan exits non-zero when any mutation is rejected.

Given the live clusters (--kubeconfig, or --management-kubeconfig and --guest-kubeconfig, the
flags of apply), plan also asks their API servers, with a server-side dry-run, what each entry
would do: create, change, unchanged, or fail (admission, validation, RBAC, an object owned by
another source or operator). With --diff, each entry that would create or change an object
shows a unified diff of the live object and the object the server would store, Secret
values masked as kubectl diff masks them. Each entry the servers would refuse is shown
once, with a hint for the common causes (a missing namespace or CRD, fields owned by
another field manager: --adopt-from). Nothing is written; plan then also exits non-zero
when any entry would fail. It also warns of each object an earlier run placed for the
operator (its operator label) that the plan leaves behind: a member of a family its
declarations name by a name pattern, no longer written while other members are, and not
deleted; and, on stderr, of each controller of the output dir that failed reaching the
network, which the operator's sandbox gives only to the endpoints of operators[].egress.`,
		Example: `  # The standalone plan of an operator's outputs, as a table
  topolayer plan --config examples/standalone.yaml --from examples/outputs/sample-operator

  # The hosted plan, checked against the operator's declarations: wide, or as JSON
  topolayer plan --config examples/hosted.yaml --from examples/outputs/sample-operator --operator sample-operator \
    --output-resources examples/outputs/sample-operator-output-resources.yaml -o wide
  topolayer plan --config examples/hosted.yaml --from examples/outputs/sample-operator --operator sample-operator \
    --output-resources examples/outputs/sample-operator-output-resources.yaml -o json

  # What the live hosted clusters of topolayer-devenv up --dir /tmp/dev would do with each entry, with diffs
  topolayer plan --config examples/hosted.yaml --from examples/outputs/sample-operator --operator sample-operator \
    --output-resources examples/outputs/sample-operator-output-resources.yaml \
    --management-kubeconfig /tmp/dev/management.kubeconfig --guest-kubeconfig /tmp/dev/guest.kubeconfig --diff`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	addSourceFlags(cmd, &o.SourceOptions)
	addClusterFlags(cmd, &o.ClusterOptions)
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: "+printerNames()+" (wide adds the class, action, source and transforms of each entry; name lists the objects written)")
	cmd.Flags().BoolVar(&o.NoHeaders, "no-headers", o.NoHeaders, "table and wide: print the rows only, without headers; the summary, warnings and failures go to stderr")
	cmd.Flags().BoolVar(&o.Diff, "diff", o.Diff, "with kubeconfig flags: show a diff of each object the live dry-run would create or change")
	cmd.Flags().BoolVar(&o.NoHints, "no-hints", o.NoHints, "leave out the hints of rejected entries and the configuration snippet proposed to place them")
	return cmd
}

func addSourceFlags(cmd *cobra.Command, o *SourceOptions) {
	cmd.Flags().StringVar(&o.ConfigFile, "config", o.ConfigFile, "topology configuration file (TopologyConfig)")
	cmd.Flags().StringVar(&o.From, "from", o.From, "the operator's apply-configuration output directory")
	cmd.Flags().StringVar(&o.OutputResourcesFile, "output-resources", o.OutputResourcesFile, "the operator's output-resources document; undeclared mutations are rejected")
	cmd.Flags().StringVar(&o.Operator, "operator", o.Operator, "the operator's name, recorded in the plan")
	cmd.Flags().StringVar(&o.MaxOutputSize, "max-output-size", o.MaxOutputSize, "refuse an output directory larger than this in total (default: the operator's limits.outputSize, as topolayer run applies it, else 64Mi)")
	cmd.Flags().StringVar(&o.HostedControlPlaneFile, "hosted-control-plane", o.HostedControlPlaneFile, "hosted: the HostedControlPlane (a YAML or JSON file) whose availability policy, node selector, tolerations, labels, annotations and release image the hypershift profile reads")
}

// Complete chooses the printer.
func (o *PlanOptions) Complete() error {
	p, err := newPlanPrinter(o.Output, o.NoHeaders, o.NoHints)
	if err != nil {
		return err
	}
	o.printer = p
	return nil
}

// Validate checks the flags without side effects.
func (o *PlanOptions) Validate() error {
	errs := []error{o.SourceOptions.validate()}
	switch {
	case o.ClusterOptions.live():
		errs = append(errs, o.ClusterOptions.validate())
		if o.Output == "dot" {
			errs = append(errs, errors.New("--output dot has no live results: use table, json or yaml with kubeconfig flags"))
		}
	case o.Diff:
		errs = append(errs, errors.New("--diff needs the live clusters: --kubeconfig, or --management-kubeconfig and --guest-kubeconfig"))
	case o.AsServiceAccount != "":
		errs = append(errs, errors.New("--as-service-account needs the live clusters: --kubeconfig, or --management-kubeconfig and --guest-kubeconfig"))
	case len(o.AdoptFrom) > 0:
		errs = append(errs, errors.New("--adopt-from needs the live clusters: --kubeconfig, or --management-kubeconfig and --guest-kubeconfig"))
	}
	return errors.Join(errs...)
}

// Run prints the plan, and fails when any mutation is rejected. With the live clusters, it
// dry-runs the plan on them and prints what each entry would do.
func (o *PlanOptions) Run(ctx context.Context) error {
	if o.printer == nil {
		return fmt.Errorf("--output %q was not completed", o.Output)
	}
	if err := o.load(ctx); err != nil {
		return err
	}
	for _, w := range o.cfg.ShadowedRules() {
		fmt.Fprintf(o.ErrOut, "warning: %s: %s\n", o.ConfigFile, w)
	}
	o.warnNetworkNeeded()
	plan, err := o.plan()
	if err != nil {
		return err
	}
	if !o.ClusterOptions.live() || rejectedSummary(plan) != nil {
		// A rejected plan is not asked of the servers: the output shows each rejected entry,
		// and the declarations that would place those a declaration can place.
		d, err := o.declarations(plan)
		if err != nil {
			return err
		}
		if err := o.printer(o.Out, o.notes(), plan, d); err != nil {
			return err
		}
		return rejectedSummary(plan)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	if err := o.reachable(ctx, o.topo); err != nil {
		// A server that was never reached says nothing of any entry: the plan is shown
		// without a LIVE column, and the command fails.
		if perr := o.printer(o.Out, o.notes(), plan, nil); perr != nil {
			return perr
		}
		return fmt.Errorf("no live dry-run: %w", err)
	}
	targets, err := o.targets(ctx, o.topo, o.Operator)
	if err != nil {
		return err
	}
	p := startProgress(o.ErrOut, fmt.Sprintf("live dry-run of %d entries", plan.Summary.Apply))
	results, dryErr := apply.DryRun(ctx, plan, targets)
	p.Stop()
	if results == nil && dryErr != nil {
		return dryErr
	}
	live, err := liveEntries(plan, results, o.Diff)
	if err != nil {
		return err
	}
	view := tableView{Wide: o.Output == "wide", NoHeaders: o.NoHeaders}
	if err := printLive(o.Out, o.notes(), o.Output, view, plan, live); err != nil {
		return err
	}
	if err := o.warnLeftBehind(ctx, plan); err != nil {
		return err
	}
	if err := liveFailures(live); err != nil {
		return err
	}
	if dryErr != nil {
		return fmt.Errorf("the live dry-run failed: %w", dryErr)
	}
	return nil
}

// declarations proposes the configuration snippet that would place what the plan refused for
// want of a declaration; nil with --no-hints or when it refused nothing.
func (o *PlanOptions) declarations(plan *plans.Plan) (*declare.Declarations, error) {
	if o.NoHints || len(plan.Rejected()) == 0 {
		return nil, nil
	}
	engine, err := o.topo.Engine(o.Operator, o.declared)
	if err != nil {
		return nil, fmt.Errorf("--config %s: %w", o.ConfigFile, err)
	}
	return engine.Declarations(plan), nil
}

// warnLeftBehind warns of each object an earlier run placed for the operator that the plan
// leaves behind: it no longer writes it while it writes others of its family, and nothing
// deletes it (leftBehind).
func (o *PlanOptions) warnLeftBehind(ctx context.Context, plan *plans.Plan) error {
	engine, err := o.topo.Engine(o.Operator, o.declared)
	if err != nil {
		return err
	}
	configs, err := o.configs(o.topo)
	if err != nil {
		return err
	}
	left, err := leftBehind(ctx, engine, plan, configs)
	if err != nil {
		return fmt.Errorf("objects left behind: %w", err)
	}
	for _, id := range left {
		fmt.Fprintf(o.ErrOut, "warning: %s: placed for %s by an earlier run, no longer written while others of its family are, and not deleted: delete it if what it copied was removed\n", id, o.Operator)
	}
	return nil
}

// warnNetworkNeeded warns of each controller of the output dir that failed reaching the
// network (runner.NetworkNeeds): the operator's sandbox reaches only operators[].egress.
func (o *PlanOptions) warnNetworkNeeded() {
	if o.out == nil || o.out.ControllerResults == nil {
		return
	}
	name := o.Operator
	if name == "" {
		name = "the operator"
	}
	for _, r := range o.out.ControllerResults.ControllerResults {
		var msgs []string
		for _, e := range r.Errors {
			msgs = append(msgs, e.Message)
		}
		if needs := runner.NetworkNeeds(strings.Join(msgs, "\n")); len(needs) > 0 {
			fmt.Fprintf(o.ErrOut, "warning: %s: controller %s failed: %s needed network to %s; add it to operators[].egress in %s if it should reach it\n",
				o.From, r.ControllerName, name, strings.Join(needs, ", "), o.ConfigFile)
		}
	}
}

// notes is where a table's summary, warnings and failures go: after the rows, unless
// --no-headers asks for the rows alone on stdout.
func (o *PlanOptions) notes() io.Writer {
	if o.NoHeaders {
		return o.ErrOut
	}
	return o.Out
}
