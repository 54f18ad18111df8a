package hosted_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/hosted/guestidentity"
	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/golden"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/namespaces"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

const hcp = "clusters-example"

func loadConfig(t *testing.T) *config.TopologyConfig {
	t.Helper()
	cfg, err := config.Load("../examples/hosted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func readDeclared(t *testing.T, file string) *contract.OutputResources {
	t.Helper()
	if file == "" {
		return nil
	}
	return contracttest.ParseFile(t, file, contract.ParseOutputResources)
}

// planCase translates one corpus case with the minimal hosted configuration.
func planCase(t *testing.T, c corpus.Case) (*contract.OutputDir, *plans.Plan) {
	t.Helper()
	return planCaseWith(t, c, loadConfig(t), readDeclared(t, c.OutputResources))
}

// planCaseWith translates one corpus case with cfg, for an operator that declares the
// output resources declared (nil: none).
func planCaseWith(t *testing.T, c corpus.Case, cfg *config.TopologyConfig, declared *contract.OutputResources) (*contract.OutputDir, *plans.Plan) {
	t.Helper()
	out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	engine, err := topology.Engine(cfg, c.Operator, declared)
	if err != nil {
		t.Fatal(err)
	}
	return out, engine.Plan(out)
}

// planCaseWithHCP translates one corpus case with cfg and the HostedControlPlane h known,
// for an operator that declares the case's output resources.
func planCaseWithHCP(t *testing.T, c corpus.Case, cfg *config.TopologyConfig, h *hosted.HostedControlPlane) *plans.Plan {
	t.Helper()
	topo, err := topology.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if topo, err = topo.WithHostedControlPlane(h); err != nil {
		t.Fatal(err)
	}
	engine, err := topo.Engine(c.Operator, readDeclared(t, c.OutputResources))
	if err != nil {
		t.Fatal(err)
	}
	out, err := contract.ReadOutputDir(c.ExpectedOutput, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return engine.Plan(out)
}

// caoCase is the cluster-authentication-operator's corpus case name (skipped without the
// corpus; a zero Case where the corpus has no such case).
func caoCase(t *testing.T, name string) corpus.Case {
	t.Helper()
	var c corpus.Case
	for _, cc := range corpus.CAOCases(t) {
		if strings.HasSuffix(cc.Name, "/"+name) {
			c = cc
		}
	}
	return c
}

// TestHostedCorpusPlacement checks every mutation of every corpus case against the rules of
// the hosted topology.
func TestHostedCorpusPlacement(t *testing.T) {
	names := namespaces.Hosted{Namespace: hcp}
	for _, c := range corpus.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			out, plan := planCase(t, c)
			// Added: the guest namespaces of guest objects whose namespace is absorbed, and the
			// service accounts of operands' guest identities the operator does not write
			// (those have no source file), and the Deletes recovered from the operator's errors
			// (RuleRecoveredDelete).
			added := 0
			for _, e := range plan.Entries {
				if e.Rule == plans.RuleGuestNamespace || (e.Rule == guestidentity.Rule && e.SourcePath == "") || e.Provenance != "" {
					added++
				}
			}
			if len(plan.Entries)-added != len(out.Mutations) {
				t.Fatalf("%d entries (%d added) for %d mutations", len(plan.Entries), added, len(out.Mutations))
			}
			if c.Operator == corpus.CAO {
				// examples/hosted.yaml lists CAO's one CRD in its policy; its binding of
				// system:authenticated lands on the guest, where those users are.
				for _, e := range plan.Rejected() {
					t.Errorf("rejected: %s: %s: %s", e.Source, e.Rule, e.Reason)
				}
			}
			targets := map[string]contract.Identity{}
			for _, e := range plan.Entries {
				src, tgt := e.Source, e.Target.Identity
				if e.Disposition == "" || e.Rule == "" {
					t.Errorf("%s: no disposition or rule: %+v", src, e)
				}
				clusterScoped := src.Namespace == ""
				switch {
				case e.Disposition == routing.Rejected:
					continue // checked above
				case e.Rule == recovery.Rule:
					continue // a recovered Delete of an undeclared object: dropped, with a warning
				case src.IsNamespace() && e.Class != contract.ClassUserWorkload:
					if e.Disposition != routing.Absorbed {
						t.Errorf("%s: namespace create is %s, want absorbed", src, e.Disposition)
					}
					continue
				case e.Disposition != routing.Apply:
					t.Errorf("%s: disposition %s", src, e.Disposition)
					continue
				case e.Rule == translate.RuleGuestSubjects:
					if e.Target.Cluster != routing.ClusterGuest || tgt != src {
						t.Errorf("%s: RBAC of guest users landed on %s as %s", src, e.Target.Cluster, tgt)
					}
				case e.Rule == guestidentity.Rule && e.Target.Cluster == routing.ClusterGuest:
					// An operand's guest identity (its service account) and its RBAC.
					if tgt != src {
						t.Errorf("%s: a guest identity landed on the guest as %s", src, tgt)
					}
				case e.Class == contract.ClassUserWorkload:
					if e.Target.Cluster != routing.ClusterGuest || tgt != src {
						t.Errorf("%s: UserWorkload landed on %s as %s", src, e.Target.Cluster, tgt)
					}
				case clusterScoped && src.Group == "rbac.authorization.k8s.io":
					if e.Target.Cluster != routing.ClusterManagement || tgt.Namespace != hcp || !strings.HasPrefix(tgt.Resource, "role") {
						t.Errorf("%s: cluster RBAC became %s", src, tgt)
					}
				case clusterScoped:
					if e.Target.Cluster != routing.ClusterManagement || tgt.Namespace != hcp || tgt.Group != namespaces.ShadowGroup(src.Group) {
						t.Errorf("%s: cluster-scoped object became %s, want the shadow group in %s", src, tgt, hcp)
					}
				default:
					if e.Target.Cluster != routing.ClusterManagement || tgt.Namespace != hcp {
						t.Errorf("%s: landed on %s as %s, want management/%s", src, e.Target.Cluster, tgt, hcp)
					}
				}
				for _, n := range []string{tgt.Name, tgt.GenerateName} {
					if n == "" {
						continue
					}
					if n == tgt.GenerateName {
						n += "x7k2q" // the server appends five characters
					}
					if msgs := namespaces.NameValidator(tgt.Group, tgt.Resource)(n); len(msgs) > 0 {
						t.Errorf("%s: target name %q is not valid for %s: %v", src, n, tgt.GroupResource(), msgs)
					}
				}
				key := e.Target.Cluster + "|" + tgt.Group + "|" + tgt.Resource + "|" + tgt.Namespace + "|" + tgt.Name + "|" + tgt.GenerateName
				if other, ok := targets[key]; ok && (other.Group != src.Group || other.Resource != src.Resource || other.Namespace != src.Namespace || other.Name != src.Name || other.GenerateName != src.GenerateName) {
					t.Errorf("%s and %s share the target %s", src, other, tgt)
				}
				targets[key] = src
				checkInverse(t, names, e)
			}
		})
	}
}

// checkInverse maps the target back with the annotations the engine wrote into the body.
func checkInverse(t *testing.T, names namespaces.Hosted, e plans.Entry) {
	t.Helper()
	var annotations map[string]string
	if e.Mutation != nil && e.Action.CarriesObject() && !e.Action.IsStatus() {
		var obj struct {
			Metadata struct {
				Annotations map[string]string `json:"annotations"`
				Labels      map[string]string `json:"labels"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(contracttest.Bytes(t, e.Mutation), &obj); err != nil {
			t.Fatalf("%s: translated body: %v", e.Source, err)
		}
		annotations = obj.Metadata.Annotations
		if annotations[namespaces.AnnotationStandaloneName] != e.Source.Name || obj.Metadata.Labels[namespaces.LabelOperator] != e.Operator {
			t.Errorf("%s: translated body lacks its standalone identity or operator label: %v %v", e.Source, annotations, obj.Metadata.Labels)
		}
	}
	back, err := names.ToSource(e.Target.Cluster, e.Target.Identity, annotations)
	if err != nil {
		t.Errorf("%s: inverse of %s: %v", e.Source, e.Target.Identity, err)
		return
	}
	if back != e.Source {
		t.Errorf("inverse(%s) = %s, want %s", e.Target.Identity, back, e.Source)
	}
}

// TestOAuthServerDeployment checks the translated oauth-openshift Deployment: every
// configMap and secret volume and the service account refer to translated names, the
// hypershift profile's edits are there, and the mounts of removed volumes are gone.
func TestOAuthServerDeployment(t *testing.T) {
	c := caoCase(t, "oauth-server-creation-minimal")
	_, plan := planCase(t, c)
	var e *plans.Entry
	for i := range plan.Entries {
		if plan.Entries[i].Source.Resource == "deployments" {
			e = &plan.Entries[i]
		}
	}
	if e == nil || e.Mutation == nil {
		t.Fatal("no translated deployment")
	}
	var d struct {
		Metadata struct {
			Name, Namespace string
			Labels          map[string]string
			Annotations     map[string]string
		}
		Spec struct {
			Template struct {
				Metadata struct {
					Namespace   string
					Labels      map[string]string
					Annotations map[string]string
				}
				Spec struct {
					ServiceAccountName string
					NodeSelector       map[string]string
					Affinity           any
					PriorityClassName  string
					Tolerations        []map[string]any
					ImagePullSecrets   []map[string]string
					Containers         []struct {
						VolumeMounts []struct{ Name string }
					}
					Volumes []struct {
						Name      string
						ConfigMap *struct{ Name string }
						Secret    *struct{ SecretName string }
						HostPath  any
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(contracttest.Bytes(t, e.Mutation), &d); err != nil {
		t.Fatal(err)
	}
	if d.Metadata.Namespace != hcp || d.Metadata.Name != "openshift-authentication--oauth-openshift" {
		t.Errorf("deployment is %s/%s", d.Metadata.Namespace, d.Metadata.Name)
	}
	spec := d.Spec.Template.Spec
	renamed := func(what, name string) {
		if !strings.HasPrefix(name, "openshift-authentication--") {
			t.Errorf("%s %q keeps its standalone name", what, name)
		}
	}
	renamed("serviceAccountName", spec.ServiceAccountName)
	volumes := map[string]bool{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = true
		switch {
		case v.ConfigMap != nil:
			renamed("configMap volume "+v.Name, v.ConfigMap.Name)
		case v.Secret != nil && v.Name == guestidentity.KubeconfigVolume:
			if want := guestidentity.SecretName("openshift-authentication", "oauth-openshift"); v.Secret.SecretName != want {
				t.Errorf("guest kubeconfig volume mounts %q, want %q", v.Secret.SecretName, want)
			}
		case v.Secret != nil:
			renamed("secret volume "+v.Name, v.Secret.SecretName)
		case v.HostPath != nil:
			t.Errorf("hostPath volume %s kept", v.Name)
		}
	}
	for _, c := range spec.Containers {
		for _, m := range c.VolumeMounts {
			if !volumes[m.Name] {
				t.Errorf("mount of removed volume %s kept", m.Name)
			}
		}
	}
	// The operator's affinity goes; HyperShift's node affinity and colocation come.
	var hyperShiftAffinity any
	if err := yaml.Unmarshal([]byte(`
nodeAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - {weight: 50, preference: {matchExpressions: [{key: hypershift.openshift.io/control-plane, operator: In, values: ["true"]}]}}
  - {weight: 100, preference: {matchExpressions: [{key: hypershift.openshift.io/cluster, operator: In, values: [`+hcp+`]}]}}
podAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - {weight: 100, podAffinityTerm: {labelSelector: {matchLabels: {hypershift.openshift.io/hosted-control-plane: `+hcp+`}}, topologyKey: kubernetes.io/hostname}}
`), &hyperShiftAffinity); err != nil {
		t.Fatal(err)
	}
	if spec.NodeSelector != nil || !cmp.Equal(spec.Affinity, hyperShiftAffinity) || spec.PriorityClassName != hosted.PriorityClassControlPlane {
		t.Errorf("standalone scheduling kept: nodeSelector %v affinity %v priorityClass %q", spec.NodeSelector, spec.Affinity, spec.PriorityClassName)
	}
	// The component labels go on the pods, as HyperShift's setDefaultOptions puts them, not
	// on the Deployment.
	if pods := d.Spec.Template.Metadata.Labels; pods[hosted.LabelHostedControlPlane] != hcp || pods[hosted.LabelControlPlaneComponent] != "oauth-openshift" {
		t.Errorf("control-plane labels missing on the pods: %v", pods)
	}
	if _, ok := d.Metadata.Labels[hosted.LabelControlPlaneComponent]; ok {
		t.Errorf("component label on the Deployment itself: %v", d.Metadata.Labels)
	}
	if d.Spec.Template.Metadata.Namespace != "" && d.Spec.Template.Metadata.Namespace != hcp {
		t.Errorf("pod template namespace %q", d.Spec.Template.Metadata.Namespace)
	}
	// The ownerReference to the HostedControlPlane is the management target's to add, not
	// the plan's: no annotation asks for it.
	if _, asked := d.Metadata.Annotations[namespaces.AnnotationOwnerHCP]; len(spec.Tolerations) != 2 || len(spec.ImagePullSecrets) != 1 || asked {
		t.Errorf("control-plane tolerations %v, pull secrets %v, owner annotation %q", spec.Tolerations, spec.ImagePullSecrets, d.Metadata.Annotations[namespaces.AnnotationOwnerHCP])
	}
	// CAO asks the standalone cluster to run the pods on its management CPUs: the guest's
	// partitioning, which is not the management cluster's.
	if v, ok := d.Spec.Template.Metadata.Annotations[hosted.AnnotationWorkloadPartitioning]; ok {
		t.Errorf("workload partitioning kept: %s", v)
	}
	for _, want := range []string{"hypershift/drop-standalone-scheduling", "hypershift/drop-workload-partitioning", "hypershift/host-path-to-empty-dir", "hypershift/control-plane-labels", "hypershift/control-plane-scheduling"} {
		if !strings.Contains(strings.Join(e.Transforms, " "), want) {
			t.Errorf("plan does not list transform %s: %v", want, e.Transforms)
		}
	}
	if len(e.Warnings) == 0 {
		t.Error("references to objects outside the plan are not reported as dangling")
	}
}

// TestGoldenPlans compares the plan and the translated mutations of every CAO case with the
// golden files under testdata/golden/<case>; `go test ./hosted -update` rewrites them.
func TestGoldenPlans(t *testing.T) {
	for _, c := range corpus.CAOCases(t) {
		t.Run(c.Name, func(t *testing.T) {
			_, plan := planCase(t, c)
			dir := filepath.Join("testdata", "golden", filepath.Base(c.Dir))
			got := t.TempDir()
			writeGoldenPlan(t, got, plan)
			golden.Dir(t, dir, got, "go test ./hosted -update")
		})
	}
}

// writeGoldenPlan writes what TestGoldenPlans compares below dir: the plan as plan.json
// and its mutations, by cluster, under translated/.
func writeGoldenPlan(t *testing.T, dir string, plan *plans.Plan) {
	t.Helper()
	js, err := json.MarshalIndent(plan, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := contract.WriteFolders(filepath.Join(dir, "translated"), plan.ByCluster(), contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plan.json"), append(js, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadConfigB() (*config.TopologyConfig, error) { return config.Load("../examples/hosted.yaml") }
