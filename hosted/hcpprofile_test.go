package hosted_test

import (
	"slices"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/routing"
)

// TestProfileReadsTheHostedControlPlane: with the HostedControlPlane known, the real CAO's
// oauth-openshift Deployment is placed as HyperShift runs its own: replicas and rollout by
// availability policy, the API-critical priority class (or the HCP's override), the HCP's
// node selector, tolerations and labels, the release image, a read-only root filesystem with
// a /tmp emptyDir; scaled to zero when the HCP debugs it; run as user 1001 where the
// configuration says the management cluster assigns no UIDs; every time still admitted by
// Pod Security "restricted". Without it the profile's generic opinions alone apply (the
// goldens).
func TestProfileReadsTheHostedControlPlane(t *testing.T) {
	c := caoCase(t, "oauth-server-creation-minimal")
	hcpObject := func(spec string, annotations map[string]string) *hosted.HostedControlPlane {
		h, err := parseHCP(t, spec, annotations)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	for _, tc := range []struct {
		name                   string
		hcp                    *hosted.HostedControlPlane
		replicas               int32
		maxSurge, maxUnavail   string
		priorityClass          string
		nodeSelector, labelKey string
		assignsNoUIDs          bool // the configuration says the management cluster assigns none
	}{
		{"HighlyAvailable (the default)", hcpObject("releaseImage: quay.io/openshift-release-dev/ocp-release:4.21.0", nil), 3, "0", "1", "hypershift-api-critical", "", "", false},
		{"SingleReplica", hcpObject("controllerAvailabilityPolicy: SingleReplica", nil), 1, "", "", "hypershift-api-critical", "", "", false},
		{"the HCP's priority override, node selector, tolerations and labels", hcpObject(
			"nodeSelector: {role: control-plane}\ntolerations: [{key: dedicated, operator: Exists}]\nlabels: {team: auth}\n",
			map[string]string{hosted.AnnotationAPICriticalPriority: "custom-critical"}), 3, "0", "1", "custom-critical", "control-plane", "team", false},
		{"oauth-openshift in debug", hcpObject("", map[string]string{hosted.AnnotationDebugDeployments: "kube-apiserver,oauth-openshift"}), 0, "0", "1", "hypershift-api-critical", "", "", false},
		{"a management cluster that assigns no UIDs", hcpObject("", nil), 3, "0", "1", "hypershift-api-critical", "", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadConfig(t)
			cfg.Topology.Hosted.ManagementAssignsNoUIDs = tc.assignsNoUIDs
			plan := planCaseWithHCP(t, c, cfg, tc.hcp)
			var d appsv1.Deployment
			found := false
			for _, e := range plan.Entries {
				if e.Source.Resource != "deployments" {
					continue
				}
				if e.Disposition != routing.Apply {
					t.Fatalf("%s: %s by %s: %s", e.Source, e.Disposition, e.Rule, e.Reason)
				}
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Object.Object, &d); err != nil {
					t.Fatal(err)
				}
				found = true
			}
			if !found {
				t.Fatal("no Deployment placed")
			}
			if d.Spec.Replicas == nil || *d.Spec.Replicas != tc.replicas {
				t.Errorf("replicas %v, want %d", d.Spec.Replicas, tc.replicas)
			}
			if ru := d.Spec.Strategy.RollingUpdate; tc.maxSurge != "" && (ru == nil || ru.MaxSurge.String() != tc.maxSurge || ru.MaxUnavailable.String() != tc.maxUnavail) {
				t.Errorf("rolling update %+v, want maxSurge %s maxUnavailable %s", ru, tc.maxSurge, tc.maxUnavail)
			}
			if d.Spec.RevisionHistoryLimit == nil || *d.Spec.RevisionHistoryLimit != 2 {
				t.Errorf("revisionHistoryLimit %v, want 2", d.Spec.RevisionHistoryLimit)
			}
			pod := d.Spec.Template
			if pod.Spec.PriorityClassName != tc.priorityClass {
				t.Errorf("priorityClassName %q, want %q", pod.Spec.PriorityClassName, tc.priorityClass)
			}
			for _, ctr := range pod.Spec.Containers {
				if sc := ctr.SecurityContext; sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("container %s: root filesystem not read-only", ctr.Name)
				}
				if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/tmp" }) {
					t.Errorf("container %s mounts nothing at /tmp", ctr.Name)
				}
			}
			if tc.nodeSelector != "" && pod.Spec.NodeSelector["role"] != tc.nodeSelector {
				t.Errorf("nodeSelector %v", pod.Spec.NodeSelector)
			}
			if tc.labelKey != "" && pod.Labels[tc.labelKey] == "" {
				t.Errorf("pod labels %v lack the HCP's %s", pod.Labels, tc.labelKey)
			}
			if d.Labels[hosted.LabelManagedBy] != "control-plane-operator" || pod.Labels[hosted.LabelManagedBy] != "" {
				t.Errorf("Deployment labels %v, pod labels %v: want %s on the Deployment alone, as HyperShift's", d.Labels, pod.Labels, hosted.LabelManagedBy)
			}
			if sc := pod.Spec.SecurityContext; tc.assignsNoUIDs != (sc != nil && sc.RunAsUser != nil && *sc.RunAsUser == hosted.DefaultSecurityContextUID) {
				t.Errorf("pod security context %+v, want runAsUser %d: %v", sc, hosted.DefaultSecurityContextUID, tc.assignsNoUIDs)
			}
			if tc.hcp.ReleaseImage != "" && pod.Annotations[hosted.AnnotationReleaseImage] != tc.hcp.ReleaseImage {
				t.Errorf("pod annotations %v lack the release image", pod.Annotations)
			}
		})
	}
}

// TestDisruptionBudgetByAvailability: the real CAO's oauth-apiserver PodDisruptionBudget is
// placed with HyperShift's budget for the HostedControlPlane's availability policy, through
// the whole engine (its selector still scoped to the simulated namespace).
func TestDisruptionBudgetByAvailability(t *testing.T) {
	c := caoCase(t, "minimal-cluster")
	for _, tc := range []struct {
		policy                       string
		minAvailable, maxUnavailable string
	}{
		{"SingleReplica", "1", ""},
		{"HighlyAvailable", "", "1"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			h, err := parseHCP(t, "controllerAvailabilityPolicy: "+tc.policy, nil)
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, e := range planCaseWithHCP(t, c, loadConfig(t), h).Entries {
				if e.Source.Resource != "poddisruptionbudgets" {
					continue
				}
				found = true
				if e.Disposition != routing.Apply || !slices.Contains(e.Transforms, "hypershift/pdb-by-availability") {
					t.Fatalf("%s: %s by %s (%s), transforms %v", e.Source, e.Disposition, e.Rule, e.Reason, e.Transforms)
				}
				var pdb policyv1.PodDisruptionBudget
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Object.Object, &pdb); err != nil {
					t.Fatal(err)
				}
				str := func(v *intstr.IntOrString) string {
					if v == nil {
						return ""
					}
					return v.String()
				}
				if got := str(pdb.Spec.MinAvailable); got != tc.minAvailable {
					t.Errorf("minAvailable %q, want %q", got, tc.minAvailable)
				}
				if got := str(pdb.Spec.MaxUnavailable); got != tc.maxUnavailable {
					t.Errorf("maxUnavailable %q, want %q", got, tc.maxUnavailable)
				}
				if p := pdb.Spec.UnhealthyPodEvictionPolicy; p == nil || *p != policyv1.AlwaysAllow {
					t.Errorf("unhealthyPodEvictionPolicy %v", p)
				}
				if pdb.Spec.Selector == nil || pdb.Spec.Selector.MatchLabels["topolayer.dev/namespace"] != "openshift-oauth-apiserver" {
					t.Errorf("selector %v not scoped to the simulated namespace", pdb.Spec.Selector)
				}
			}
			if !found {
				t.Fatal("no PodDisruptionBudget placed")
			}
		})
	}
}

func TestHostedControlPlaneEqual(t *testing.T) {
	base := func() *hosted.HostedControlPlane {
		return &hosted.HostedControlPlane{Namespace: "clusters-a", Name: "a", AvailabilityPolicy: hosted.HighlyAvailable,
			NodeSelector: map[string]string{"a": "b"}, Tolerations: []any{map[string]any{"key": "k"}}}
	}
	for _, tc := range []struct {
		name string
		a, b *hosted.HostedControlPlane
		want bool
	}{
		{"both nil", nil, nil, true},
		{"one nil", base(), nil, false},
		{"the same", base(), base(), true},
		{"another policy", base(), func() *hosted.HostedControlPlane { h := base(); h.AvailabilityPolicy = hosted.SingleReplica; return h }(), false},
		{"another toleration", base(), func() *hosted.HostedControlPlane {
			h := base()
			h.Tolerations = []any{map[string]any{"key": "j"}}
			return h
		}(), false},
		{"another audit profile", base(), func() *hosted.HostedControlPlane { h := base(); h.AuditProfile = "None"; return h }(), false},
		{"an annotation", base(), func() *hosted.HostedControlPlane { h := base(); h.Annotations = map[string]string{"x": "y"}; return h }(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Equal(tc.b); got != tc.want {
				t.Errorf("Equal = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestAPICriticalDisruptionBudget: HyperShift writes a PodDisruptionBudget for each
// API-critical component; the profile adds one beside the real CAO's oauth-openshift
// Deployment (an entry of its own, named by hypershift/api-critical-pdb, placed and scoped as
// the Deployment is, its budget by availability policy), none beside a workload that is not
// API-critical (CAO's oauth-apiserver, which writes its own), and none when the
// configuration turns it off.
func TestAPICriticalDisruptionBudget(t *testing.T) {
	const rule = "hypershift/api-critical-pdb"
	for _, tc := range []struct {
		name, corpusCase, policy     string
		disable                      bool
		want                         bool
		minAvailable, maxUnavailable string
	}{
		{name: "HighlyAvailable", corpusCase: "oauth-server-creation-minimal", policy: "HighlyAvailable", want: true, maxUnavailable: "1"},
		{name: "SingleReplica", corpusCase: "oauth-server-creation-minimal", policy: "SingleReplica", want: true, minAvailable: "1"},
		{name: "turned off", corpusCase: "oauth-server-creation-minimal", policy: "HighlyAvailable", disable: true},
		{name: "not API-critical", corpusCase: "oauth-apiserver-creation-minimal", policy: "HighlyAvailable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := parseHCP(t, "controllerAvailabilityPolicy: "+tc.policy, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg := loadConfig(t)
			if tc.disable {
				cfg.Transforms.Disable = append(cfg.Transforms.Disable, rule)
			}
			var added []string
			for _, e := range planCaseWithHCP(t, caoCase(t, tc.corpusCase), cfg, h).Entries {
				if e.Rule != rule {
					continue
				}
				added = append(added, e.Source.String())
				want := contract.Identity{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Namespace: "openshift-authentication", Name: "oauth-openshift"}
				if e.Disposition != routing.Apply || e.Source != want || e.Target.Cluster != routing.ClusterManagement || e.Target.Identity.Name != "openshift-authentication--oauth-openshift" {
					t.Fatalf("%s -> %s %s: %s (%s)", e.Source, e.Target.Cluster, e.Target.Identity, e.Disposition, e.Reason)
				}
				if !slices.Contains(e.Transforms, "hypershift/pdb-by-availability") {
					t.Errorf("transforms %v lack the budget by availability", e.Transforms)
				}
				var pdb policyv1.PodDisruptionBudget
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(e.Object.Object, &pdb); err != nil {
					t.Fatal(err)
				}
				if got := intOrString(pdb.Spec.MinAvailable); got != tc.minAvailable {
					t.Errorf("minAvailable %q, want %q", got, tc.minAvailable)
				}
				if got := intOrString(pdb.Spec.MaxUnavailable); got != tc.maxUnavailable {
					t.Errorf("maxUnavailable %q, want %q", got, tc.maxUnavailable)
				}
				if sel := pdb.Spec.Selector; sel == nil || sel.MatchLabels["app"] != "oauth-openshift" || sel.MatchLabels["topolayer.dev/namespace"] != "openshift-authentication" {
					t.Errorf("selector %v: not the Deployment's, scoped to its simulated namespace", sel)
				}
			}
			if got := len(added) > 0; got != tc.want || len(added) > 1 {
				t.Errorf("added %v, want one: %v", added, tc.want)
			}
		})
	}
}

func intOrString(v *intstr.IntOrString) string {
	if v == nil {
		return ""
	}
	return v.String()
}
