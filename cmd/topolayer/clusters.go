package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
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
			errs = append(errs, cli.UsageErrorf("--%s/--%s: the %s topology has no %s cluster", clusterFlags[c][0], clusterFlags[c][1], topo.Name(), c))
		}
	}
	out := map[string]*rest.Config{}
	for _, c := range clusters {
		path, context := o.flags(c)
		if path == "" && context == "" && len(clusters) > 1 {
			errs = append(errs, cli.UsageErrorf("the %s topology needs --%s or --%s (its %s cluster)", topo.Name(), clusterFlags[c][0], clusterFlags[c][1], c))
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
