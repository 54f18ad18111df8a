package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// ApplyOptions are the options of `topolayer apply`.
type ApplyOptions struct {
	SourceOptions
	ClusterOptions
	Output string // -o

	print func(io.Writer, *plans.Plan, []apply.EntryResult) error
	IOStreams
}

var applyPrinters = map[string]func(io.Writer, *plans.Plan, []apply.EntryResult) error{
	"table": printApplyTable,
	"json": func(w io.Writer, p *plans.Plan, r []apply.EntryResult) error {
		return printJSON(w, applyResults(p, r))
	},
	"yaml": func(w io.Writer, p *plans.Plan, r []apply.EntryResult) error {
		return printYAML(w, applyResults(p, r))
	},
}

// NewCmdApply builds `topolayer apply`.
func NewCmdApply(streams IOStreams) *cobra.Command {
	o := &ApplyOptions{Output: "table", IOStreams: streams}
	cmd := &cobra.Command{
		Use:   "apply --config FILE --from DIR --operator NAME (--kubeconfig FILE | --management-kubeconfig FILE --guest-kubeconfig FILE)",
		Short: "Write an operator's outputs to the live clusters of a topology",
		Long: `Apply plans an operator's apply-configuration output directory as plan does, then writes
every mutation to the live clusters: the one cluster (standalone, --kubeconfig), or the hosted
control plane's namespace on the management cluster and the guest cluster (hosted,
--management-kubeconfig and --guest-kubeconfig). As kubectl does, a flag's kubeconfig file
is read alone; without one, $KUBECONFIG or ~/.kube/config; --context, --management-context
and --guest-context choose a context in it.

The whole plan is checked first with a server-side dry-run; when any entry fails (admission,
validation, RBAC, an object owned by another source or operator), nothing is written. Writes
that would change nothing are skipped, so applying the same plan twice writes nothing the
second time. With --as-service-account, every request impersonates that service account.

Apply prints one line per entry and exits non-zero when any entry failed. With -o json or
yaml, each entry's result carries the object as the server stored it (as kubectl apply -o
yaml shows it, without managedFields).`,
		Example: `  # Apply the sample operator's outputs to the hosted dev environment (topolayer-devenv up --dir /tmp/dev)
  topolayer apply --config examples/hosted.yaml --from examples/outputs/sample-operator --operator sample-operator \
    --output-resources examples/outputs/sample-operator-output-resources.yaml \
    --management-kubeconfig /tmp/dev/management.kubeconfig --guest-kubeconfig /tmp/dev/guest.kubeconfig

  # Again (nothing is written the second time), showing what the servers store
  topolayer apply --config examples/hosted.yaml --from examples/outputs/sample-operator --operator sample-operator \
    --output-resources examples/outputs/sample-operator-output-resources.yaml \
    --management-kubeconfig /tmp/dev/management.kubeconfig --guest-kubeconfig /tmp/dev/guest.kubeconfig -o yaml`,
		Args: cobra.NoArgs,
		RunE: cli.RunCommand(o),
	}
	addSourceFlags(cmd, &o.SourceOptions)
	addClusterFlags(cmd, &o.ClusterOptions)
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: table|json|yaml (json and yaml carry each object as the server stored it, without managedFields)")
	return cmd
}

// Complete chooses the printer.
func (o *ApplyOptions) Complete() error {
	p, ok := applyPrinters[o.Output]
	if !ok {
		return cli.UsageErrorf("--output %q: must be table, json or yaml", o.Output)
	}
	o.print = p
	return nil
}

// Validate checks the flags without side effects.
func (o *ApplyOptions) Validate() error {
	errs := []error{o.SourceOptions.validate(), o.ClusterOptions.validate()}
	if o.Operator == "" {
		errs = append(errs, errors.New("--operator is required"))
	}
	return errors.Join(errs...)
}

// Run plans, applies and prints the results; it fails when the plan has a rejected entry
// or any entry failed.
func (o *ApplyOptions) Run(ctx context.Context) error {
	if o.print == nil {
		return fmt.Errorf("--output %q was not completed", o.Output)
	}
	if ctx == nil {
		ctx = context.Background()
	}
	plan, err := o.acceptedPlan(ctx)
	if err != nil {
		return err
	}
	targets, err := o.targets(ctx, o.topo, o.Operator)
	if err != nil {
		return err
	}
	p := startProgress(o.ErrOut, fmt.Sprintf("applying %d entries", plan.Summary.Apply))
	results, applyErr := apply.ApplyPlan(ctx, plan, targets)
	p.Stop()
	if err := o.print(o.Out, plan, results); err != nil {
		return errors.Join(applyErr, err)
	}
	if applyErr != nil {
		return applyFailures(results, applyErr)
	}
	if err := o.serviceCABundles(ctx, plan); err != nil {
		return err
	}
	return o.guestKubeconfigs(ctx, plan)
}

// serviceCABundles fills the service CA bundle of the ConfigMaps the plan placed in the HCP
// namespace that ask for one (package serviceca), when the topology configures its source,
// and says so on ErrOut.
func (o *ApplyOptions) serviceCABundles(ctx context.Context, plan *plans.Plan) error {
	names := o.topo.ServiceCACandidates(plan, nil, nil)
	if len(names) == 0 {
		return nil
	}
	configs, err := o.configs(o.topo)
	if err != nil {
		return err
	}
	in, err := o.topo.ServiceCA(configs)
	if err != nil || in == nil {
		return err
	}
	filled, err := in.Inject(ctx, names)
	for _, f := range filled {
		state := "unchanged"
		if f.Written {
			state = "written"
		}
		fmt.Fprintf(o.ErrOut, "service CA bundle of configmap %s/%s: %s\n", in.Namespace(), f.Name, state)
	}
	if err != nil {
		return fmt.Errorf("service CA bundles: %w", err)
	}
	return nil
}

// guestKubeconfigs writes the kubeconfig Secrets of the plan's guest identities (package
// guestidentity), once the plan wrote their service accounts on the guest, and says so on
// ErrOut. They are topolayer's own objects: written as the kubeconfigs' identity.
func (o *ApplyOptions) guestKubeconfigs(ctx context.Context, plan *plans.Plan) error {
	if len(plan.GuestIdentities) == 0 {
		return nil
	}
	configs, err := o.configs(o.topo)
	if err != nil {
		return err
	}
	owner, err := o.topo.ResolveOwner(ctx, configs[o.topo.Home()], "")
	if err != nil {
		return fmt.Errorf("guest kubeconfigs: %w", err)
	}
	w, err := o.topo.GuestIdentities(configs, o.Operator, owner, nil)
	if err != nil || w == nil {
		return err
	}
	issued, err := w.Ensure(ctx, plan.GuestIdentities)
	for _, is := range issued {
		state := "unchanged"
		if is.Written {
			state = "written"
		}
		fmt.Fprintf(o.ErrOut, "guest kubeconfig secret %s (%s): %s, token expires %s\n", is.Identity.Secret, is.Identity.User(), state, is.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if err != nil {
		return fmt.Errorf("guest kubeconfigs: %w", err)
	}
	return nil
}

// applyResult is one entry of `apply -o json`.
type applyResult struct {
	Index   int    `json:"index"`
	Source  string `json:"source"`
	Action  string `json:"action"`
	Cluster string `json:"cluster"`
	Target  string `json:"target"`
	Status  string `json:"status"`
	Change  string `json:"change,omitempty"`
	Error   string `json:"error,omitempty"`
	// Object is the object as the server stored it (or, for a skipped entry, as it is),
	// without managedFields; absent when the server returned none (a delete, a failure).
	Object map[string]any `json:"object,omitempty"`
}

func applyResults(plan *plans.Plan, results []apply.EntryResult) []applyResult {
	out := make([]applyResult, 0, len(results))
	for _, r := range results {
		a := applyResult{
			Index: r.Index, Action: string(r.Action), Cluster: r.Cluster, Target: objectName(r.Identity),
			Status: string(r.Status), Change: string(r.Change),
		}
		if r.Index >= 0 && r.Index < len(plan.Entries) {
			a.Source = objectName(plan.Entries[r.Index].Source)
		}
		if r.Err != nil {
			a.Error = r.Err.Error()
		}
		if r.Object != nil {
			obj := r.Object.DeepCopy()
			unstructured.RemoveNestedField(obj.Object, "metadata", "managedFields")
			a.Object = obj.Object
		}
		out = append(out, a)
	}
	return out
}

// printApplyTable prints one row per entry (its index in the plan, where it landed, what
// became of it), the counts, then each failure once, with a hint for the common ones.
func printApplyTable(w io.Writer, plan *plans.Plan, results []apply.EntryResult) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tCLUSTER\tNAMESPACE\tNAME\tACTION\tSTATUS\tCHANGE")
	counts := map[string]int{}
	for _, r := range results {
		counts[string(r.Status)]++
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Index, r.Cluster, dash(r.Identity.Namespace), typedName(r.Identity), r.Action, r.Status, dash(string(r.Change)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\n%d entries: %d applied, %d skipped, %d failed, %d not run\n", len(results),
		counts[string(apply.StatusApplied)], counts[string(apply.StatusSkipped)], counts[string(apply.StatusFailed)], counts[string(apply.StatusNotRun)]); err != nil {
		return err
	}
	if counts[string(apply.StatusFailed)] == 0 {
		return nil
	}
	fmt.Fprintf(w, "\nFAILED (%d)\n", counts[string(apply.StatusFailed)])
	for _, a := range applyResults(plan, results) {
		if a.Status != string(apply.StatusFailed) {
			continue
		}
		r := results[slices.IndexFunc(results, func(r apply.EntryResult) bool { return r.Index == a.Index })]
		if err := writeFailure(w, fmt.Sprintf("#%d %s %s:%s", a.Index, a.Action, a.Cluster, a.Target), "source: "+a.Source, a.Error, liveHint(r.Err, r.Cluster, r.Identity)); err != nil {
			return err
		}
	}
	return nil
}

// applyFailures is apply's error when entries failed: the output shows each one already,
// so it only counts them and says what was written.
func applyFailures(results []apply.EntryResult, err error) error {
	failed, applied := 0, 0
	for _, r := range results {
		switch r.Status {
		case apply.StatusFailed:
			failed++
		case apply.StatusApplied:
			applied++
		}
	}
	if failed == 0 {
		return err // a failure of the plan as a whole (a cluster without a target, ...)
	}
	if applied == 0 {
		return fmt.Errorf("%d of %d entries failed; nothing was written", failed, len(results))
	}
	return fmt.Errorf("%d of %d entries failed after %d were written; the entries after it were not run", failed, len(results), applied)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps a table row on one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
