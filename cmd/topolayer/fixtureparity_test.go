package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/fixtureparity"
)

// fixtureVariants are the variants of HyperShift's oauth-openshift fixtures
// (../shared/corpus/hypershift-oauth-openshift, README there) and what the guest's
// configuration says in each: the Infrastructure's platform, the APIServer's TLS profile,
// the FeatureGate's feature set.
var fixtureVariants = []struct {
	name, dir, platform, tlsProfile, featureSet string
}{
	{name: "default", dir: "", platform: "AWS"},
	{name: "TechPreviewNoUpgrade", dir: "TechPreviewNoUpgrade", platform: "AWS", featureSet: "TechPreviewNoUpgrade"},
	{name: "IBMCloud", dir: "IBMCloud", platform: "IBMCloud"},
	{name: "GCP", dir: "GCP", platform: "GCP", featureSet: "TechPreviewNoUpgrade"},
	{name: "AROSwift", dir: "AROSwift", platform: "Azure"},
	{name: "ModernTLS", dir: "ModernTLS", platform: "AWS", tlsProfile: "Modern"},
}

// fixtureFloor is what each variant reaches today (TestCAOFixtureParity), with the shipped
// example and with HyperShift's component options (fixtureComponentOptions): the equal
// leaves of the fixture Deployment and of all pairs. A change that lowers one is a
// regression unless it says why: hypershift/bound-scratch lowered each by 2, the empty
// emptyDirs (logs, tmp-dir) HyperShift writes and topolayer bounds on the shared management
// cluster (reasons.yaml: bounded-scratch). One that raises it raises the floor: the report
// showing the HostedControlPlane's ownerReference on what the management target writes
// raised each by 4 per object (apiVersion, kind, name, uid).
var fixtureFloor = map[string]map[string]struct{ deploymentEqual, equal int }{
	"example": {
		"default": {146, 243}, "TechPreviewNoUpgrade": {146, 243}, "IBMCloud": {146, 243},
		"GCP": {156, 253}, "AROSwift": {146, 243}, "ModernTLS": {146, 243},
	},
	"component options": {
		"default": {151, 248}, "TechPreviewNoUpgrade": {151, 248}, "IBMCloud": {151, 248},
		"GCP": {161, 258}, "AROSwift": {151, 248}, "ModernTLS": {151, 248},
	},
}

// fixtureComponentOptions are what HyperShift's control-plane-operator would pass for its
// oauth-openshift component when it embeds topolayer, where they differ from the shipped
// example: the release payload's images as its test's fake release provider names them (each
// image by its component name). The shipped example already declares the konnectivity
// proxies, the OAuth server's proxy environment, the availability prober and the audit-logs
// sidecar, as HyperShift's component does.
func fixtureComponentOptions(o *hosted.ComponentOptions) {
	yes := true
	o.Images = map[string]string{}
	for _, component := range []string{"oauth-server", "oauth-apiserver", "cluster-authentication-operator", hosted.ImageControlPlaneOperator, hosted.ImageAvailabilityProber, hosted.ImageCLI} {
		o.Images[component] = component
	}
	o.Konnectivity = []hosted.KonnectivityProxy{{
		Workload: "oauth-openshift",
		Mode:     hosted.KonnectivityDual,
		HTTPS:    hosted.KonnectivityHTTPSOptions{ServingPort: 8092, ConnectDirectlyToCloudAPIs: &yes},
		SOCKS5:   hosted.KonnectivitySOCKS5Options{ResolveFromGuestClusterDNS: &yes, ResolveFromManagementClusterDNS: &yes},
		ProxyEnv: hosted.ProxyEnv{Containers: []string{"oauth-openshift"}, NoProxy: []string{"kube-apiserver", "audit-webhook", "oauth-openshift.$(HCP_NAMESPACE).svc.cluster.local"},
			PlatformNoProxy: map[string][]string{"IBMCloud": {"iam.cloud.ibm.com", "iam.test.cloud.ibm.com"}}},
	}}
	o.AvailabilityProber = []string{"oauth-openshift"}
	o.AuditLogs = []string{"oauth-openshift"}
}

// TestCAOFixtureParity runs the real cluster-authentication-operator offline, for each
// variant of HyperShift's oauth-openshift fixtures, on the inputs it would see in that hosted
// control plane (hcp-namespace/hcp; the guest's configuration of examples/
// cluster-authentication-operator/seed with the variant's platform, TLS profile and feature
// set; the Route HyperShift publishes as CAO's oauth-openshift; no control-plane nodes),
// feeding each run's writes back as inputs until they stop changing, then runs
// `topolayer parity --hypershift-fixtures` on everything it wrote, with the shipped hosted
// example for that HostedControlPlane, and logs the report's figures per variant.
func TestCAOFixtureParity(t *testing.T) {
	cao, _ := caoAndConfigObserverInput(t)
	corpusRoot := os.Getenv("TOPOLAYER_CORPUS")
	fixtures := filepath.Join(corpusRoot, "hypershift-oauth-openshift")
	if !isDirectory(fixtures) {
		t.Skipf("TOPOLAYER_CORPUS=%q holds no hypershift-oauth-openshift fixtures", corpusRoot)
	}
	base := filepath.Join(corpusRoot, "cluster-authentication-operator", "test-data", "apply-configuration", "overall", "oauth-server-creation-minimal", "input-dir")
	if !isDirectory(base) {
		t.Skipf("TOPOLAYER_CORPUS=%q holds no cluster-authentication-operator oauth-server-creation-minimal input", corpusRoot)
	}
	configs := []struct {
		name string
		edit func(*hosted.ComponentOptions)
	}{
		{"example", func(*hosted.ComponentOptions) {}},
		{"component options", fixtureComponentOptions},
	}
	declared := caoOutputResources(t, cao)

	var lines []string
	for _, v := range fixtureVariants {
		t.Run(v.name, func(t *testing.T) {
			_, op := fixtureConfig(t, configs[0].edit)
			in := caoFixtureInput(t, base, v.platform, v.tlsProfile, v.featureSet)
			out, runs := runCAOToFixpoint(t, cao, op, in)
			hcp := fixtureHCPOn(t, v.platform)
			for _, c := range configs {
				cfg, _ := fixtureConfig(t, c.edit)
				if v.platform == "IBMCloud" {
					// A user on IBM Cloud names its guest API server's Service port, 2040
					// (HyperShift's InClusterKASURL): the guest kubeconfigs and the prober use it.
					cfg = withGuestServer(t, cfg, "https://kube-apiserver:2040")
				}
				lines = append(lines, fixtureReport(t, c.name, filepath.Join(fixtures, v.dir), cfg, hcp, declared, out, op.Name, runs, v.name))
			}
		})
	}
	t.Logf("summary:\n%s", strings.Join(lines, "\n"))
}

// fixtureReport runs `topolayer parity --hypershift-fixtures` on one variant's output with the
// configuration named setup, logs its figures, and holds that configuration's floor.
func fixtureReport(t *testing.T, setup, fixtures, cfg, hcp, declared, out, op string, runs int, variant string) string {
	t.Helper()
	js, errOut, err := run(t, "parity", "--hypershift-fixtures", fixtures, "--config-hosted", cfg,
		"--hosted-control-plane", hcp, "--output-resources", declared, "--from", out, "--operator", op, "-o", "json")
	var r fixtureparity.Report
	if jerr := json.Unmarshal([]byte(js), &r); jerr != nil || len(r.Variants) != 1 {
		t.Fatalf("parity -o json: %v (error %v)\n%s", jerr, err, errOut)
	}
	if err != nil {
		// Every leaf is equal or explained by a committed reason, and, with CAO's own
		// declarations, the shipped example refuses none of its outputs.
		if strings.Contains(errOut, "mutations rejected") || strings.Contains(err.Error(), "mutations rejected") {
			t.Errorf("%s: the shipped example refuses some of CAO's outputs: %v\n%s", setup, err, errOut)
		} else {
			t.Errorf("%s: %v", setup, err)
		}
	}
	vr := r.Variants[0]
	vr.Variant = variant + ", " + setup
	line := fmt.Sprintf("%s (%d runs): %s", vr.Line(), runs, deploymentCounts(vr))
	t.Log(line)
	dep := 0
	for _, o := range vr.Objects {
		// HyperShift's PodDisruptionBudget: placed by the profile (hypershift/api-critical-pdb),
		// equal but for named reasons.
		if o.Pair == "pdb" && (o.Placed == "" || o.Counts.Unexplained() > 0) {
			t.Errorf("%s: PodDisruptionBudget placed as %q with %d unexplained leaves", setup, o.Placed, o.Counts.Unexplained())
		}
		if o.Pair == "deployment" {
			dep = o.Counts.Equal
			if o.Placed == "" {
				t.Errorf("%s: no placed Deployment after %d runs", setup, runs)
			}
		}
	}
	if floor, ok := fixtureFloor[setup][variant]; ok && (dep < floor.deploymentEqual || vr.Counts.Equal < floor.equal) {
		t.Errorf("%s: equal leaves: Deployment %d, all pairs %d; the floor is %d and %d", setup, dep, vr.Counts.Equal, floor.deploymentEqual, floor.equal)
	}
	return line
}

func deploymentCounts(v fixtureparity.VariantReport) string {
	for _, o := range v.Objects {
		if o.Pair == "deployment" {
			return "Deployment " + o.Counts.String()
		}
	}
	return "no Deployment pair"
}

// fixtureConfig writes the shipped hosted CAO example for HyperShift's test HCP
// hcp-namespace/hcp and returns its path and CAO's operator entry.
func fixtureConfig(t *testing.T, edit func(*hosted.ComponentOptions)) (string, config.Operator) {
	t.Helper()
	cfg, err := config.Load(caoHostedConfig)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topology.Hosted.Namespace, cfg.Topology.Hosted.HostedControlPlane = "hcp-namespace", "hcp"
	edit(&cfg.Topology.Hosted.HyperShift)
	path := filepath.Join(t.TempDir(), "hosted.yaml")
	writeYAML(t, path, cfg)
	i := slices.IndexFunc(cfg.Operators, func(o config.Operator) bool { return o.Name == "cluster-authentication-operator" })
	if i < 0 {
		t.Fatalf("%s: no operator cluster-authentication-operator", caoHostedConfig)
	}
	return path, cfg.Operators[i]
}

// withGuestServer rewrites the configuration at path with guestIdentity.server set to
// server, and returns the new file's path.
func withGuestServer(t *testing.T, path, server string) string {
	t.Helper()
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Topology.Hosted.GuestIdentity.Server = server
	out := filepath.Join(t.TempDir(), "hosted.yaml")
	writeYAML(t, out, cfg)
	return out
}

// fixtureHCP is the HostedControlPlane the fixtures were rendered for, as their README says.
const fixtureHCP = "../../examples/cluster-authentication-operator/fixtures-hcp.yaml"

// fixtureHCPOn writes fixtureHCP on another platform (its spec.platform.type, without the
// AWS fields), as HyperShift's test renders each variant for one, and returns its path.
func fixtureHCPOn(t *testing.T, platform string) string {
	t.Helper()
	if platform == "AWS" {
		return fixtureHCP
	}
	data, err := os.ReadFile(fixtureHCP)
	if err != nil {
		t.Fatal(err)
	}
	var hcp map[string]any
	if err := utilyaml.Unmarshal(data, &hcp); err != nil {
		t.Fatal(err)
	}
	hcp["spec"].(map[string]any)["platform"] = map[string]any{"type": platform}
	path := filepath.Join(t.TempDir(), "hcp.yaml")
	writeYAML(t, path, hcp)
	return path
}

// caoOwnedInputs are what CAO writes itself in openshift-authentication: left out of the
// inputs, so that the compared objects are CAO's own rendering, not the corpus's.
var caoOwnedInputs = []string{"audit", "v4-0-config-system-cliconfig", "v4-0-config-system-session", "v4-0-config-system-ocp-branding-template"}

// caoFixtureInput builds the input directory CAO would see in the hosted control plane of
// the fixtures: the corpus's oauth-server-creation-minimal input (its admitted Route, the
// serving certificate and router certificates others provide) without control-plane nodes
// (a hosted guest has none) and without what CAO writes itself, and the guest configuration
// of the example's seed, with the variant's platform, TLS profile and feature set.
func caoFixtureInput(t *testing.T, base, platform, tlsProfile, featureSet string) string {
	t.Helper()
	dir, err := contract.ReadInputDir(base, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	objs := map[contract.Identity]*contract.InputObject{}
	for _, o := range dir.Objects() {
		id := o.Identity()
		if id.Resource == "nodes" || (id.Namespace == "openshift-authentication" && slices.Contains(caoOwnedInputs, id.Name)) {
			continue
		}
		id.Version = ""
		objs[id] = o
	}
	resources := map[string]string{"APIServer": "apiservers", "Authentication": "authentications", "ClusterVersion": "clusterversions",
		"Console": "consoles", "Infrastructure": "infrastructures", "Ingress": "ingresses", "OAuth": "oauths", "Proxy": "proxies"}
	seed := "../../examples/cluster-authentication-operator/seed/"
	config := map[string]*unstructured.Unstructured{}
	for _, f := range []string{"guest/10-config.yaml", "guest-status/20-config-status.yaml"} {
		for _, o := range readDocuments(t, seed+f) {
			if prev, ok := config[o.GetKind()]; ok {
				prev.Object["status"] = o.Object["status"]
				continue
			}
			config[o.GetKind()] = o
		}
	}
	infra := config["Infrastructure"].Object
	infra["spec"].(map[string]any)["platformSpec"] = map[string]any{"type": platform}
	status := infra["status"].(map[string]any)
	status["platform"] = platform
	status["platformStatus"] = map[string]any{"type": platform}
	// A hosted guest's control plane is outside it.
	status["controlPlaneTopology"] = "External"
	if tlsProfile != "" {
		config["APIServer"].Object["spec"].(map[string]any)["tlsSecurityProfile"] = map[string]any{"type": tlsProfile, strings.ToLower(tlsProfile): map[string]any{}}
	}
	if featureSet != "" {
		config["FeatureGate"] = &unstructured.Unstructured{Object: map[string]any{"apiVersion": "config.openshift.io/v1", "kind": "FeatureGate",
			"metadata": map[string]any{"name": "cluster"}, "spec": map[string]any{"featureSet": featureSet}}}
		resources["FeatureGate"] = "featuregates"
	}
	for kind, o := range config {
		id := contract.Identity{Group: "config.openshift.io", Resource: resources[kind], Name: o.GetName()}
		objs[id] = &contract.InputObject{Group: id.Group, Resource: id.Resource, Object: o}
	}
	in := filepath.Join(t.TempDir(), "input-dir")
	if err := contract.WriteInputDir(in, slices.Collect(maps.Values(objs))); err != nil {
		t.Fatal(err)
	}
	return in
}

// readDocuments reads the objects of a multi-document YAML file.
func readDocuments(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := utilyaml.NewYAMLOrJSONDecoder(f, 4096)
	var out []*unstructured.Unstructured
	for {
		var obj map[string]any
		if err := d.Decode(&obj); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if obj != nil {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// runCAOToFixpoint runs CAO (with its operator entry's environment and controllers) on in,
// folds what each run writes back into its inputs, and stops when a run changes no input's
// spec or data, or after 8 runs. CAO reads back what it wrote: its Deployment needs the Secrets and
// ConfigMaps of earlier runs. It returns an output directory with the last write of each
// object by each action over all runs, and the number of runs.
func runCAOToFixpoint(t *testing.T, cao string, op config.Operator, in string, want ...string) (string, int) {
	t.Helper()
	// Some writes depend on the order of CAO's controllers, which upstream shuffles on
	// purpose (a copy comes only in the runs where the resource syncer runs after the
	// controller that registers it): with want, the runs go on past the fixpoint until every
	// object named there was written, as a resync would run them.
	seen := map[string]bool{}
	missing := func() bool {
		for _, name := range want {
			if !seen[name] {
				return true
			}
		}
		return false
	}
	limit := 8
	if len(want) > 0 {
		limit = 20
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for _, k := range slices.Sorted(maps.Keys(op.Env)) {
		env = append(env, k+"="+op.Env[k])
	}
	type key struct {
		class  contract.Class
		action contract.Action
		id     contract.Identity
	}
	last := map[key]contract.Mutation{}
	var order []key
	runs := 0
	for runs < limit {
		runs++
		out := filepath.Join(t.TempDir(), "output-dir")
		args := []string{"apply-configuration", "--input-dir", in, "--output-dir", out, "--now", "2025-08-07T22:38:20Z"}
		if len(op.Controllers) > 0 {
			args = append(args, "--controllers", strings.Join(op.Controllers, ","))
		}
		cmd := exec.Command(cao, args...)
		cmd.Env = env
		log, _ := cmd.CombinedOutput() // non-zero when a controller fails offline (onControllerFailure: Apply)
		dir, err := contract.ReadOutputDir(out, contract.ReadOptions{})
		if err != nil {
			t.Fatalf("run %d: %v\n%s", runs, err, log)
		}
		for _, m := range dir.Mutations {
			if m.Identity().Resource == "events" {
				continue
			}
			id := m.Identity()
			id.Version = ""
			seen[id.Name] = true
			k := key{m.Class, m.Metadata.Action, id}
			if _, ok := last[k]; !ok {
				order = append(order, k)
			}
			last[k] = m
		}
		next, changed := foldOutputs(t, in, dir)
		if len(changed) == 0 && !missing() {
			break
		}
		t.Logf("run %d changed %d inputs: %s", runs, len(changed), strings.Join(changed, ", "))
		in = next
	}
	ms := make([]contract.Mutation, 0, len(order))
	for _, k := range order {
		m := last[k]
		m.Prefix = ""
		ms = append(ms, m)
	}
	out := filepath.Join(t.TempDir(), "outputs")
	if err := contract.WriteOutputDir(out, &contract.OutputDir{Mutations: ms}, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return out, runs
}

// foldOutputs writes a new input directory: in's objects with the objects of out's Create,
// Update and Apply mutations in their place (status from the status actions), and without
// the deleted ones. changed names the objects whose spec or data changes: a status write is
// folded, but does not count as a change. Each of CAO's controllers applies its own part of
// its operator's status (server-side apply, one field manager each); offline, without the
// server's field ownership, each replaces the last, and they would never agree. Events are
// not inputs.
func foldOutputs(t *testing.T, in string, out *contract.OutputDir) (string, []string) {
	t.Helper()
	dir, err := contract.ReadInputDir(in, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ group, resource, namespace, name string }
	objs := map[key]*contract.InputObject{}
	var order []key
	for _, o := range dir.Objects() {
		k := key{o.Group, o.Resource, o.Namespace, o.Object.GetName()}
		objs[k] = o
		order = append(order, k)
	}
	var changed []string
	for _, m := range out.Mutations {
		id := m.Identity()
		if id.Resource == "events" || id.Name == "" {
			continue
		}
		k := key{id.Group, id.Resource, id.Namespace, id.Name}
		prev := objs[k]
		switch m.Metadata.Action {
		case contract.ActionDelete:
			if prev != nil {
				delete(objs, k)
				changed = append(changed, "-"+id.String())
			}
			continue
		case contract.ActionCreate, contract.ActionUpdate, contract.ActionApply, contract.ActionUpdateStatus, contract.ActionApplyStatus:
		default:
			continue
		}
		data, err := m.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		body, err := contract.ParseObject(data)
		if err != nil {
			t.Fatalf("%s: %v", m.Path, err)
		}
		var obj map[string]any
		switch {
		case m.Metadata.Action == contract.ActionUpdateStatus || m.Metadata.Action == contract.ActionApplyStatus:
			if prev == nil {
				continue
			}
			obj = prev.Object.DeepCopy().Object
			obj["status"] = body["status"]
		case prev != nil && m.Metadata.Action == contract.ActionApply:
			obj = prev.Object.DeepCopy().Object
			for f, v := range body {
				if f != "metadata" {
					obj[f] = v
				}
			}
		default:
			obj = body
			if prev != nil {
				if s, ok := prev.Object.Object["status"]; ok {
					if _, has := obj["status"]; !has {
						obj["status"] = s
					}
				}
			}
		}
		if prev != nil && sameJSON(t, prev.Object.Object, obj) {
			continue
		}
		if _, ok := objs[k]; !ok {
			order = append(order, k)
		}
		objs[k] = &contract.InputObject{Group: id.Group, Resource: id.Resource, Namespace: id.Namespace, Object: &unstructured.Unstructured{Object: obj}}
		if m.Metadata.Action != contract.ActionUpdateStatus && m.Metadata.Action != contract.ActionApplyStatus {
			changed = append(changed, string(m.Metadata.Action)+" "+id.String())
		}
	}
	list := make([]*contract.InputObject, 0, len(objs))
	for _, k := range order {
		if o, ok := objs[k]; ok {
			list = append(list, o)
		}
	}
	next := filepath.Join(t.TempDir(), "input-dir")
	if err := contract.WriteInputDir(next, list); err != nil {
		t.Fatal(err)
	}
	return next, changed
}

// sameJSON compares two objects as JSON: the input directory's reader and the output's parse
// numbers into different Go types.
func sameJSON(t *testing.T, a, b map[string]any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(ja) == string(jb)
}
