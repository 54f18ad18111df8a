package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pmezard/go-difflib/difflib"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/apply"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
	"github.com/topolayer/topolayer/translate"
)

// ClusterOptions are the flags that name the live clusters of a topology and the identity
// to use on them; apply and plan (live dry-run) share them.
type ClusterOptions struct {
	Kubeconfig           string   // --kubeconfig (standalone)
	ManagementKubeconfig string   // --management-kubeconfig (hosted)
	GuestKubeconfig      string   // --guest-kubeconfig (hosted)
	AsServiceAccount     string   // --as-service-account namespace/name
	AdoptFrom            []string // --adopt-from MANAGER (repeatable)
}

func addClusterFlags(cmd *cobra.Command, o *ClusterOptions) {
	cmd.Flags().StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "kubeconfig file of the cluster (standalone topology)")
	cmd.Flags().StringVar(&o.ManagementKubeconfig, "management-kubeconfig", o.ManagementKubeconfig, "kubeconfig file of the management cluster (hosted topology)")
	cmd.Flags().StringVar(&o.GuestKubeconfig, "guest-kubeconfig", o.GuestKubeconfig, "kubeconfig file of the guest cluster (hosted topology)")
	cmd.Flags().StringVar(&o.AsServiceAccount, "as-service-account", o.AsServiceAccount, "NAMESPACE/NAME of a service account every request impersonates")
	cmd.Flags().StringArrayVar(&o.AdoptFrom, "adopt-from", o.AdoptFrom, "adopt existing objects without topolayer's marks, moving the field ownership of this previous field manager to the operator's (repeatable; adds to the operator's adopt.fieldManagers)")
}

// live reports whether any cluster flag is set.
func (o *ClusterOptions) live() bool {
	return o.Kubeconfig != "" || o.ManagementKubeconfig != "" || o.GuestKubeconfig != ""
}

// validate checks the flags without side effects: the topology is not known before the
// configuration is read, so only the combinations are checked here.
func (o *ClusterOptions) validate() error {
	var errs []error
	hosted := o.ManagementKubeconfig != "" || o.GuestKubeconfig != ""
	switch {
	case o.Kubeconfig != "" && hosted:
		errs = append(errs, errors.New("--kubeconfig (standalone) and --management-kubeconfig/--guest-kubeconfig (hosted) are exclusive"))
	case hosted && (o.ManagementKubeconfig == "" || o.GuestKubeconfig == ""):
		errs = append(errs, errors.New("--management-kubeconfig and --guest-kubeconfig go together"))
	case !o.live():
		errs = append(errs, errors.New("--kubeconfig (standalone) or --management-kubeconfig and --guest-kubeconfig (hosted) are required"))
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

// loadKubeconfig reads one kubeconfig file, and only that file: neither $KUBECONFIG nor
// ~/.kube/config is consulted.
func loadKubeconfig(flag, path string) (*rest.Config, error) {
	kc, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("--%s: %w", flag, err)
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--%s %s: %w", flag, path, err)
	}
	return cfg, nil
}

// flagOf names the kubeconfig flag of each cluster a topology can have.
var flagOf = map[string]string{
	routing.ClusterStandalone: "kubeconfig",
	routing.ClusterManagement: "management-kubeconfig",
	routing.ClusterGuest:      "guest-kubeconfig",
}

// path returns the kubeconfig file given for a flag.
func (o *ClusterOptions) path(flag string) string {
	switch flag {
	case "kubeconfig":
		return o.Kubeconfig
	case "management-kubeconfig":
		return o.ManagementKubeconfig
	case "guest-kubeconfig":
		return o.GuestKubeconfig
	}
	return ""
}

// configs loads the client configuration of every cluster of the topology from its
// kubeconfig flag, and refuses the flags of clusters the topology does not have.
func (o *ClusterOptions) configs(topo *topology.Topology) (map[string]*rest.Config, error) {
	clusters := topo.Clusters()
	var errs []error
	for _, c := range []string{routing.ClusterStandalone, routing.ClusterManagement, routing.ClusterGuest} {
		if o.path(flagOf[c]) != "" && !slices.Contains(clusters, c) {
			errs = append(errs, fmt.Errorf("--%s: the %s topology has no %s cluster", flagOf[c], topo.Name(), c))
		}
	}
	out := map[string]*rest.Config{}
	for _, c := range clusters {
		flag := flagOf[c]
		path := o.path(flag)
		if path == "" {
			errs = append(errs, fmt.Errorf("the %s topology needs --%s (its %s cluster)", topo.Name(), flag, c))
			continue
		}
		rc, err := loadKubeconfig(flag, path)
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
		return nil, fmt.Errorf("--%s: %w", flagOf[topo.Home()], err)
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
	"json":  printApplyJSON,
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
--management-kubeconfig and --guest-kubeconfig). Kubeconfigs are read from the flags only.

The whole plan is checked first with a server-side dry-run; when any entry fails (admission,
validation, RBAC, an object owned by another source or operator), nothing is written. Writes
that would change nothing are skipped, so applying the same plan twice writes nothing the
second time. With --as-service-account, every request impersonates that service account.

Apply prints one line per entry and exits non-zero when any entry failed.`,
		Example: `  # Apply an operator's outputs to a hosted control plane
  topolayer apply --config examples/hosted.yaml --from out --operator sample-operator \
    --management-kubeconfig dev/management.kubeconfig --guest-kubeconfig dev/guest.kubeconfig

  # The same, as the operator's service account, with JSON results
  topolayer apply --config examples/hosted.yaml --from out --operator sample-operator \
    --management-kubeconfig dev/management.kubeconfig --guest-kubeconfig dev/guest.kubeconfig \
    --as-service-account clusters-example/sample-operator -o json`,
		Args: cobra.NoArgs,
		RunE: runCommand(o),
	}
	addSourceFlags(cmd, &o.SourceOptions)
	addClusterFlags(cmd, &o.ClusterOptions)
	cmd.Flags().StringVarP(&o.Output, "output", "o", o.Output, "output format: table|json")
	return cmd
}

// Complete chooses the printer.
func (o *ApplyOptions) Complete() error {
	p, ok := applyPrinters[o.Output]
	if !ok {
		return fmt.Errorf("--output %q: must be table or json", o.Output)
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
	results, applyErr := apply.ApplyPlan(ctx, plan, targets)
	if err := o.print(o.Out, plan, results); err != nil {
		return errors.Join(applyErr, err)
	}
	if applyErr != nil {
		return applyErr
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
		out = append(out, a)
	}
	return out
}

func printApplyJSON(w io.Writer, plan *translate.Plan, results []apply.EntryResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(applyResults(plan, results))
}

func printApplyTable(w io.Writer, plan *translate.Plan, results []apply.EntryResult) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTRY\tACTION\tTARGET\tSTATUS\tCHANGE\tERROR")
	counts := map[string]int{}
	for _, r := range applyResults(plan, results) {
		counts[r.Status]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Source, r.Action, r.Cluster+":"+r.Target, r.Status, dash(r.Change), dash(oneLine(r.Error)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\n%d entries: %d applied, %d skipped, %d failed, %d not run\n", len(results),
		counts[string(apply.StatusApplied)], counts[string(apply.StatusSkipped)], counts[string(apply.StatusFailed)], counts[string(apply.StatusNotRun)])
	return err
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

// printLive prints the plan and the live results: for table, the plan's table, then one line
// per entry, then the diffs; for json and yaml, one document {plan, live}.
func printLive(w io.Writer, format string, printPlan planPrinter, plan *translate.Plan, live []liveEntry) error {
	switch format {
	case "json", "yaml":
		doc := struct {
			Plan *translate.Plan `json:"plan"`
			Live []liveEntry     `json:"live"`
		}{plan, live}
		js, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		if format == "yaml" {
			if js, err = yaml.JSONToYAML(js); err != nil {
				return err
			}
			_, err = w.Write(js)
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", js)
		return err
	case "table":
	default:
		return fmt.Errorf("--output %s has no live results", format)
	}
	if err := printPlan(w, plan); err != nil {
		return err
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "ENTRY\tACTION\tTARGET\tLIVE\tREASON")
	counts := map[string]int{}
	for _, l := range live {
		counts[l.Result]++
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Source, l.Action, l.Cluster+":"+l.Target, l.Result, dash(oneLine(l.Reason)))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	adopt := ""
	if n := counts[string(apply.ChangeAdopt)]; n > 0 {
		adopt = fmt.Sprintf(" %d adopt,", n)
	}
	fmt.Fprintf(w, "\nlive dry-run: %d create, %d change,%s %d unchanged, %d delete, %d fail\n",
		counts[string(apply.ChangeCreate)], counts[string(apply.ChangeUpdate)], adopt, counts[string(apply.ChangeNone)],
		counts[string(apply.ChangeDelete)], counts[liveFail])
	for _, l := range live {
		if l.Diff != "" {
			fmt.Fprintf(w, "\n%s", l.Diff)
		}
	}
	return nil
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

// objectDiff is the unified diff of live and would, named after the entry's target.
func objectDiff(name string, live, would *unstructured.Unstructured) (string, error) {
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
