package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/apply"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
	"github.com/topolayer/topolayer/translate"
)

// ClusterOptions are the flags that name the live clusters of a topology and the identity
// to use on them; apply and plan (live dry-run) share them.
//
// Each cluster's client configuration is found by kubectl's loading rules: its kubeconfig
// flag, else $KUBECONFIG, else ~/.kube/config, then its context flag, else the current
// context. A hosted topology needs each of its two clusters named by a flag (a kubeconfig,
// a context, or both), so that the two never fall silently on the same current context.
type ClusterOptions struct {
	Kubeconfig           string   // --kubeconfig (standalone)
	Context              string   // --context (standalone)
	ManagementKubeconfig string   // --management-kubeconfig (hosted)
	ManagementContext    string   // --management-context (hosted)
	GuestKubeconfig      string   // --guest-kubeconfig (hosted)
	GuestContext         string   // --guest-context (hosted)
	AsServiceAccount     string   // --as-service-account namespace/name
	AdoptFrom            []string // --adopt-from MANAGER (repeatable)
}

func addClusterFlags(cmd *cobra.Command, o *ClusterOptions) {
	addKubeconfigFlags(cmd, o)
	cmd.Flags().StringVar(&o.AsServiceAccount, "as-service-account", o.AsServiceAccount, "NAMESPACE/NAME of a service account every request impersonates")
	cmd.Flags().StringArrayVar(&o.AdoptFrom, "adopt-from", o.AdoptFrom, "adopt existing objects without topolayer's marks, moving the field ownership of this previous field manager to the operator's (repeatable; adds to the operator's adopt.fieldManagers)")
}

// addKubeconfigFlags adds the flags that find each cluster's client configuration.
func addKubeconfigFlags(cmd *cobra.Command, o *ClusterOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file of the cluster (standalone topology; default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.Context, "context", o.Context, "kubeconfig context of the cluster (standalone topology; default: the current context)")
	f.StringVar(&o.ManagementKubeconfig, "management-kubeconfig", o.ManagementKubeconfig, "kubeconfig file of the management cluster (hosted topology; default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.ManagementContext, "management-context", o.ManagementContext, "kubeconfig context of the management cluster (hosted topology)")
	f.StringVar(&o.GuestKubeconfig, "guest-kubeconfig", o.GuestKubeconfig, "kubeconfig file of the guest cluster (hosted topology; default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.GuestContext, "guest-context", o.GuestContext, "kubeconfig context of the guest cluster (hosted topology)")
}

// standaloneFlags and hostedFlags report whether any flag of each topology is set.
func (o *ClusterOptions) standaloneFlags() bool { return o.Kubeconfig != "" || o.Context != "" }
func (o *ClusterOptions) hostedFlags() bool {
	return o.ManagementKubeconfig != "" || o.ManagementContext != "" || o.GuestKubeconfig != "" || o.GuestContext != ""
}

// live reports whether any cluster flag is set: plan then asks the live clusters.
func (o *ClusterOptions) live() bool { return o.standaloneFlags() || o.hostedFlags() }

// validate checks the flags without side effects: the topology is not known before the
// configuration is read, so only the combinations are checked here. With no cluster flag at
// all, a standalone topology's cluster comes from $KUBECONFIG or ~/.kube/config.
func (o *ClusterOptions) validate() error {
	var errs []error
	management := o.ManagementKubeconfig != "" || o.ManagementContext != ""
	guest := o.GuestKubeconfig != "" || o.GuestContext != ""
	switch {
	case o.standaloneFlags() && o.hostedFlags():
		errs = append(errs, errors.New("--kubeconfig/--context (standalone) and --management-*/--guest-* (hosted) are exclusive"))
	case management != guest:
		errs = append(errs, errors.New("--management-kubeconfig or --management-context and --guest-kubeconfig or --guest-context go together"))
	}
	if o.AsServiceAccount != "" {
		if _, err := apply.ServiceAccountUser(o.AsServiceAccount); err != nil {
			errs = append(errs, fmt.Errorf("--as-service-account %q: must be NAMESPACE/NAME", o.AsServiceAccount))
		}
	}
	for _, m := range o.AdoptFrom {
		if strings.TrimSpace(m) == "" {
			errs = append(errs, errors.New("--adopt-from: must name a field manager"))
		}
	}
	return errors.Join(errs...)
}

// impersonate returns the user every write impersonates: --as-service-account, else the
// serviceAccount the configuration gives the operator, else none ("").
func (o *ClusterOptions) impersonate(cfg *config.TopologyConfig, operator string) (string, error) {
	sa := o.AsServiceAccount
	if sa == "" && cfg != nil {
		if op, ok := cfg.Operator(operator); ok {
			sa = op.ServiceAccount
		}
	}
	if sa == "" {
		return "", nil
	}
	return apply.ServiceAccountUser(sa)
}

// loadKubeconfig finds a client configuration by kubectl's loading rules: the file path
// when given (and then only that file), else $KUBECONFIG, else ~/.kube/config; the context
// when given, else the current one. flag names the kubeconfig flag in errors.
func loadKubeconfig(flag, path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		where := "--" + flag + " " + path
		if path == "" {
			where = "--" + flag + " not given, $KUBECONFIG or ~/.kube/config"
		}
		if context != "" {
			where += ", context " + context
		}
		return nil, fmt.Errorf("%s: %w", where, err)
	}
	return cfg, nil
}

// clusterFlags are the kubeconfig and context flags of each cluster a topology can have.
var clusterFlags = map[string][2]string{
	routing.ClusterStandalone: {"kubeconfig", "context"},
	routing.ClusterManagement: {"management-kubeconfig", "management-context"},
	routing.ClusterGuest:      {"guest-kubeconfig", "guest-context"},
}

// flags returns the kubeconfig path and context given for a cluster.
func (o *ClusterOptions) flags(cluster string) (path, context string) {
	switch cluster {
	case routing.ClusterStandalone:
		return o.Kubeconfig, o.Context
	case routing.ClusterManagement:
		return o.ManagementKubeconfig, o.ManagementContext
	case routing.ClusterGuest:
		return o.GuestKubeconfig, o.GuestContext
	}
	return "", ""
}

// configs loads the client configuration of every cluster of the topology, and refuses the
// flags of clusters the topology does not have. A cluster of a hosted topology must be
// named by its kubeconfig or context flag; the one cluster of a standalone topology may come
// from $KUBECONFIG or ~/.kube/config alone, as kubectl's does.
func (o *ClusterOptions) configs(topo *topology.Topology) (map[string]*rest.Config, error) {
	clusters := topo.Clusters()
	var errs []error
	for _, c := range []string{routing.ClusterStandalone, routing.ClusterManagement, routing.ClusterGuest} {
		if path, context := o.flags(c); (path != "" || context != "") && !slices.Contains(clusters, c) {
			errs = append(errs, usageErrorf("--%s/--%s: the %s topology has no %s cluster", clusterFlags[c][0], clusterFlags[c][1], topo.Name(), c))
		}
	}
	out := map[string]*rest.Config{}
	for _, c := range clusters {
		path, context := o.flags(c)
		if path == "" && context == "" && len(clusters) > 1 {
			errs = append(errs, usageErrorf("the %s topology needs --%s or --%s (its %s cluster)", topo.Name(), clusterFlags[c][0], clusterFlags[c][1], c))
			continue
		}
		rc, err := loadKubeconfig(clusterFlags[c][0], path, context)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out[c] = rc
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// reachTimeout bounds the question that tells whether a cluster's API server answers.
const reachTimeout = 10 * time.Second

// errUnreachable is the error of a cluster whose API server did not answer.
var errUnreachable = errors.New("unreachable")

// reachable asks each cluster of the topology for its version, and fails, naming each
// cluster and flag, when any API server does not answer: nothing can be said of an entry
// for a server that was never reached.
func (o *ClusterOptions) reachable(ctx context.Context, topo *topology.Topology) error {
	configs, err := o.configs(topo)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range slices.Sorted(maps.Keys(configs)) {
		rc := rest.CopyConfig(configs[c])
		rc.Timeout = reachTimeout
		dc, err := discovery.NewDiscoveryClientForConfig(rc)
		if err == nil {
			_, err = dc.ServerVersion()
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cluster %s (--%s, server %s): %w: %w", c, clusterFlags[c][0], rc.Host, errUnreachable, err))
		}
	}
	return errors.Join(errs...)
}

// targets builds the live targets of the topology for one operator (topology.Targets):
// every request impersonates the operator's service account when one is given.
func (o *ClusterOptions) targets(ctx context.Context, topo *topology.Topology, operator string) (map[string]apply.Target, error) {
	user, err := o.impersonate(topo.Config(), operator)
	if err != nil {
		return nil, err
	}
	configs, err := o.configs(topo)
	if err != nil {
		return nil, err
	}
	var adopt *config.Adoption
	if cfg := topo.Config(); cfg != nil {
		if op, ok := cfg.Operator(operator); ok {
			adopt = op.Adopt
		}
	}
	targets, err := topo.Targets(ctx, configs, topology.TargetOptions{Operator: operator, Impersonate: user, Adopt: topology.AdoptionOf(adopt, o.AdoptFrom)})
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", clusterFlags[topo.Home()][0], err)
	}
	return targets, nil
}

// ApplyOptions are the options of `topolayer apply`.
type ApplyOptions struct {
	SourceOptions
	ClusterOptions
	Output string // -o

	print func(io.Writer, *translate.Plan, []apply.EntryResult) error
	IOStreams
}

var applyPrinters = map[string]func(io.Writer, *translate.Plan, []apply.EntryResult) error{
	"table": printApplyTable,
	"json": func(w io.Writer, p *translate.Plan, r []apply.EntryResult) error {
		return printJSON(w, applyResults(p, r))
	},
	"yaml": func(w io.Writer, p *translate.Plan, r []apply.EntryResult) error {
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
		RunE: runCommand(o),
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
		return usageErrorf("--output %q: must be table, json or yaml", o.Output)
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
	return o.guestKubeconfigs(ctx, plan)
}

// guestKubeconfigs writes the kubeconfig Secrets of the plan's guest identities (package
// guestidentity), once the plan wrote their service accounts on the guest, and says so on
// ErrOut. They are topolayer's own objects: written as the kubeconfigs' identity.
func (o *ApplyOptions) guestKubeconfigs(ctx context.Context, plan *translate.Plan) error {
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

func applyResults(plan *translate.Plan, results []apply.EntryResult) []applyResult {
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
func printApplyTable(w io.Writer, plan *translate.Plan, results []apply.EntryResult) error {
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

// liveEntry is what the live dry-run of `topolayer plan` says of one apply entry.
type liveEntry struct {
	Index   int    `json:"index"`
	Source  string `json:"source"`
	Action  string `json:"action"`
	Cluster string `json:"cluster"`
	Target  string `json:"target"`
	// Result is create, change, unchanged, delete, fail, or valid (the server accepts the
	// entry but cannot say what it would store before an earlier entry is written).
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
	// Hint says how to resolve a common failure (a missing namespace or CRD, fields owned by
	// another field manager).
	Hint string `json:"hint,omitempty"`
	// Diff is a unified diff of the live object and the object the server would store
	// (with --diff, for create, change and delete).
	Diff string `json:"diff,omitempty"`
}

// Live dry-run results besides the apply.Change values.
const (
	liveFail  = "fail"
	liveValid = "valid"
)

func liveEntries(plan *translate.Plan, results []apply.EntryResult, withDiff bool) ([]liveEntry, error) {
	out := make([]liveEntry, 0, len(results))
	for _, r := range results {
		l := liveEntry{Index: r.Index, Action: string(r.Action), Cluster: r.Cluster, Target: objectName(r.Identity)}
		if r.Index >= 0 && r.Index < len(plan.Entries) {
			l.Source = objectName(plan.Entries[r.Index].Source)
		}
		switch {
		case r.Status == apply.StatusFailed:
			l.Result = liveFail
			if r.Err != nil {
				l.Reason = r.Err.Error()
				l.Hint = liveHint(r.Err, r.Cluster, r.Identity)
			}
		case r.Status == apply.StatusValid && r.Change == "":
			l.Result, l.Reason = liveValid, "an earlier entry of the plan creates what it needs"
		case r.Status == apply.StatusValid:
			l.Result = string(r.Change)
		default:
			l.Result = string(r.Status)
		}
		if withDiff && r.Status == apply.StatusValid && r.Change != "" && r.Change != apply.ChangeNone {
			d, err := objectDiff(r.Cluster+":"+l.Target, r.Live, r.Object)
			if err != nil {
				return nil, err
			}
			l.Diff = d
		}
		out = append(out, l)
	}
	return out, nil
}

// printLive prints the plan and the live results: for table and wide, the plan's tables
// with each entry's live result, the counts, each failure once with a hint, then the
// diffs; for name, the plan's names; for json and yaml, one document {plan, live}.
func printLive(out, notes io.Writer, format string, view tableView, plan *translate.Plan, live []liveEntry) error {
	switch format {
	case "json", "yaml":
		doc := struct {
			Plan *translate.Plan `json:"plan"`
			Live []liveEntry     `json:"live"`
		}{plan, live}
		if format == "yaml" {
			return printYAML(out, doc)
		}
		return printJSON(out, doc)
	case "name":
		return printPlanNames(out, plan)
	case "table", "wide":
	default:
		return fmt.Errorf("--output %s has no live results", format)
	}
	byIndex := make(map[int]liveEntry, len(live))
	for _, l := range live {
		byIndex[l.Index] = l
	}
	if err := view.print(out, notes, plan, byIndex); err != nil {
		return err
	}
	counts := map[string]int{}
	for _, l := range live {
		counts[l.Result]++
	}
	adopt := ""
	if n := counts[string(apply.ChangeAdopt)]; n > 0 {
		adopt = fmt.Sprintf(" %d adopt,", n)
	}
	valid := ""
	if n := counts[liveValid]; n > 0 {
		valid = fmt.Sprintf(", %d valid (an earlier entry of the plan creates what it needs, so the server cannot say more yet)", n)
	}
	fmt.Fprintf(notes, "\nlive dry-run: %d create, %d change,%s %d unchanged, %d delete, %d fail%s\n",
		counts[string(apply.ChangeCreate)], counts[string(apply.ChangeUpdate)], adopt, counts[string(apply.ChangeNone)],
		counts[string(apply.ChangeDelete)], counts[liveFail], valid)
	if n := counts[liveFail]; n > 0 {
		fmt.Fprintf(notes, "\nFAILED (%d): the live clusters refuse these entries; nothing is written\n", n)
		for _, l := range live {
			if l.Result != liveFail {
				continue
			}
			if err := writeFailure(notes, fmt.Sprintf("#%d %s %s:%s", l.Index, l.Action, l.Cluster, l.Target), "source: "+l.Source, l.Reason, l.Hint); err != nil {
				return err
			}
		}
	}
	for _, l := range live {
		if l.Diff != "" {
			fmt.Fprintf(out, "\n%s", l.Diff)
		}
	}
	return nil
}

// liveFailures is plan's error when the live dry-run refused entries: the output shows each
// one already, so it only counts them.
func liveFailures(live []liveEntry) error {
	n := 0
	for _, l := range live {
		if l.Result == liveFail {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("the live dry-run failed: %d of %d entries would fail; nothing is written", n, len(live))
}

// liveHint says how to resolve the common failures of a write: a namespace or a resource
// the cluster does not have, and fields that another field manager owns. A refusal of an
// object without topolayer's marks (apply.ConflictError) says how to adopt it itself.
func liveHint(err error, cluster string, id contract.Identity) string {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return ""
	case meta.IsNoMatchError(err):
		hint := fmt.Sprintf("hint: the %s cluster does not serve %s: install its CustomResourceDefinition first", cluster, resourceType(id))
		if strings.HasSuffix(id.Group, namespaces.ShadowGroupSuffix) {
			hint += " (topolayer shadow-crds writes the shadow CRDs of a hosted control plane)"
		}
		return hint
	case apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces":
		return fmt.Sprintf("hint: namespace %s does not exist on the %s cluster: create it, or have the operator write the Namespace in the same output", status.Status().Details.Name, cluster)
	case apierrors.IsConflict(err) && errors.As(err, &status):
		var managers []string
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				if c.Type != metav1.CauseTypeFieldManagerConflict {
					continue
				}
				rest, ok := strings.CutPrefix(c.Message, "conflict with ")
				if !ok {
					continue
				}
				if q, err := strconv.QuotedPrefix(rest); err == nil {
					if m, err := strconv.Unquote(q); err == nil && !slices.Contains(managers, m) {
						managers = append(managers, m)
					}
				}
			}
		}
		if len(managers) == 0 {
			return ""
		}
		flags := make([]string, len(managers))
		for i, m := range managers {
			flags[i] = "--adopt-from " + strconv.Quote(m)
		}
		return fmt.Sprintf("hint: field manager %s owns these fields: to move them to the operator, pass %s, or list the manager in operators[].adopt.fieldManagers of the configuration (topolayer run)",
			strings.Join(managers, ", "), strings.Join(flags, " "))
	}
	return ""
}

// objectYAML renders obj for a diff without the fields the server sets on every write
// (contract.ServerSetFields); nil is empty.
func objectYAML(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	c := obj.DeepCopy()
	contract.StripServerFields(c.Object)
	out, err := yaml.Marshal(c.Object)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// objectDiff is the unified diff of live and would, named after the entry's target. The
// values of a Secret are masked (maskSecrets), as kubectl diff masks them.
func objectDiff(name string, live, would *unstructured.Unstructured) (string, error) {
	live, would = maskSecrets(live, would)
	a, err := objectYAML(live)
	if err != nil {
		return "", err
	}
	b, err := objectYAML(would)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(a),
		B:        difflib.SplitLines(b),
		FromFile: "live/" + name,
		ToFile:   "planned/" + name,
		Context:  3,
	})
}
