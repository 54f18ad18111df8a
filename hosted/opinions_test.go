package hosted_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// parseHCP reads a HostedControlPlane of hcp/example from the YAML of its spec and its
// annotations.
func parseHCP(t *testing.T, spec string, annotations map[string]string) (*hosted.HostedControlPlane, error) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(hosted.HostedControlPlaneGVK())
	u.SetNamespace(hcp)
	u.SetName("example")
	u.SetAnnotations(annotations)
	if spec != "" {
		var s map[string]any
		if err := yaml.Unmarshal([]byte(spec), &s); err != nil {
			t.Fatal(err)
		}
		u.Object["spec"] = s
	}
	return hosted.ParseHostedControlPlane(u)
}

// runOpinion runs, on one object of the management cluster, every transform of the
// hypershift profile named name that selects it, and returns the object and how many ran.
func runOpinion(t *testing.T, o hosted.ProfileOptions, name string, id contract.Identity, in string) (map[string]any, int) {
	t.Helper()
	transforms, ok := hosted.Profile(hosted.ProfileHyperShift, o)
	if !ok {
		t.Fatal("no hypershift profile")
	}
	obj, err := kyaml.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	src := routing.Object{Class: contract.ClassManagement, Identity: id}
	ran := 0
	for _, tr := range transforms {
		if tr.Name != name || !tr.Selects(src, routing.ClusterManagement) || tr.Match.Resource != id.Resource {
			continue
		}
		f, err := tr.Filter(transform.Context{Source: src, Cluster: routing.ClusterManagement, HCPNamespace: hcp, HostedControlPlane: "example"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Filter([]*kyaml.RNode{obj}); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		ran++
	}
	m, err := obj.Map()
	if err != nil {
		t.Fatal(err)
	}
	return m, ran
}

// yamlMap parses a YAML document the way runOpinion returns an object.
func yamlMap(t *testing.T, doc string) map[string]any {
	t.Helper()
	n, err := kyaml.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	m, err := n.Map()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestFrameworkOpinions: each opinion of HyperShift's component framework, as a named
// transform of the hypershift profile, on one workload: what it changes and what it keeps.
func TestFrameworkOpinions(t *testing.T) {
	deployment := func(name string) contract.Identity {
		return contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: name}
	}
	haHCP, err := parseHCP(t, "", map[string]string{
		hosted.AnnotationDebugDeployments: "oauth-openshift,kube-scheduler",
		hosted.AnnotationResourceRequestOverridePrefix + "/oauth-openshift.oauth-openshift": "cpu=100m,memory=1Gi,aro.openshift.io/swift-nic=1,storage=lots",
		hosted.AnnotationResourceRequestOverridePrefix + "/oauth-openshift.init":            "memory=20Mi",
		hosted.AnnotationResourceRequestOverridePrefix + "/kube-scheduler.kube-scheduler":   "cpu=1",
	})
	if err != nil {
		t.Fatal(err)
	}
	singleHCP, err := parseHCP(t, "controllerAvailabilityPolicy: SingleReplica", nil)
	if err != nil {
		t.Fatal(err)
	}
	dedicatedHCP, err := parseHCP(t, "", map[string]string{
		hosted.AnnotationTopology:                   hosted.TopologyDedicatedRequestServing,
		hosted.AnnotationRequestServingNodeSelector: "size=large,pool=serving",
	})
	if err != nil {
		t.Fatal(err)
	}
	openStackHCP, err := parseHCP(t, "platform: {type: OpenStack}", nil)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	// What HyperShift's oauth-openshift component declares (its fixture's HCP), with images.
	components := hosted.ProfileOptions{Components: oauthServerComponents("kube-apiserver", "audit-webhook")}
	components.Components.Images = map[string]string{
		"oauth-server": "quay.io/oauth-server@sha256:1", "cli": "quay.io/cli@sha256:2",
		hosted.ImageControlPlaneOperator: "quay.io/cpo@sha256:3", hosted.ImageAvailabilityProber: "quay.io/prober@sha256:4",
	}
	for _, tc := range []struct {
		name      string
		options   hosted.ProfileOptions
		transform string
		id        contract.Identity
		in, want  string
		none      bool // no copy of the transform selects the object (else exactly one does)
	}{
		{
			name: "ConfigMap volumes 0644, Secret volumes 0640, whatever the operator set", transform: "hypershift/volume-default-modes", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {volumes: [
  {name: a, configMap: {name: a, defaultMode: 511}},
  {name: b, secret: {secretName: b}},
  {name: c, projected: {sources: [{secret: {name: c}}], defaultMode: 256}},
  {name: d, emptyDir: {}}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {volumes: [
  {name: a, configMap: {name: a, defaultMode: 420}},
  {name: b, secret: {secretName: b, defaultMode: 416}},
  {name: c, projected: {sources: [{secret: {name: c}}], defaultMode: 256}},
  {name: d, emptyDir: {}}]}}}}`,
		},
		{
			name: "IfNotPresent, Always for :latest, on containers; init containers and a container without an image as written", transform: "hypershift/image-pull-policy", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  initContainers: [{name: i, image: "quay.io/x:v1", imagePullPolicy: Always}],
  containers: [{name: a, image: "quay.io/x:v1", imagePullPolicy: Always}, {name: b, image: "quay.io/x:latest"}, {name: c}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  initContainers: [{name: i, image: "quay.io/x:v1", imagePullPolicy: Always}],
  containers: [{name: a, image: "quay.io/x:v1", imagePullPolicy: IfNotPresent}, {name: b, image: "quay.io/x:latest", imagePullPolicy: Always}, {name: c}]}}}}`,
		},
		{
			name: "FallbackToLogsOnError on containers and init containers", transform: "hypershift/termination-message-policy",
			id: contract.Identity{Group: "batch", Version: "v1", Resource: "cronjobs", Namespace: "ns", Name: "prune"},
			in: `{apiVersion: batch/v1, kind: CronJob, spec: {jobTemplate: {spec: {template: {spec: {
  initContainers: [{name: i}], containers: [{name: a, terminationMessagePolicy: File}]}}}}}}`,
			want: `{apiVersion: batch/v1, kind: CronJob, spec: {jobTemplate: {spec: {template: {spec: {
  initContainers: [{name: i, terminationMessagePolicy: FallbackToLogsOnError}], containers: [{name: a, terminationMessagePolicy: FallbackToLogsOnError}]}}}}}}`,
		},
		{
			name: "no default UID unless the management cluster assigns none", transform: "hypershift/default-uid", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {securityContext: {runAsNonRoot: true}}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {securityContext: {runAsNonRoot: true}}}}}`,
			none: true,
		},
		{
			name: "the default UID, the rest of the pod's security context kept", options: hosted.ProfileOptions{ManagementAssignsNoUIDs: true}, transform: "hypershift/default-uid", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}, runAsUser: 1001}}}}}`,
		},
		{
			name: "etcd's volumes owned by the default UID's group", options: hosted.ProfileOptions{ManagementAssignsNoUIDs: true}, transform: "hypershift/default-uid",
			id:   contract.Identity{Group: "apps", Version: "v1", Resource: "statefulsets", Namespace: "ns", Name: "etcd"},
			in:   `{apiVersion: apps/v1, kind: StatefulSet, spec: {template: {spec: {}}}}`,
			want: `{apiVersion: apps/v1, kind: StatefulSet, spec: {template: {spec: {securityContext: {runAsUser: 1001, fsGroup: 1001}}}}}`,
		},
		{
			name: "a component the debug-deployments annotation lists is scaled to zero", options: hosted.ProfileOptions{HostedControlPlane: haHCP}, transform: "hypershift/debug-deployments", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 0}}`,
		},
		{
			name: "a component it does not list is not", options: hosted.ProfileOptions{HostedControlPlane: haHCP}, transform: "hypershift/debug-deployments", id: deployment("console"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3}}`,
			none: true,
		},
		{
			name: "the HCP's request overrides of the component's containers, the swift NIC's limit with its request", options: hosted.ProfileOptions{HostedControlPlane: haHCP}, transform: "hypershift/resource-request-overrides", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  initContainers: [{name: init}],
  containers: [{name: oauth-openshift, resources: {requests: {cpu: 10m, ephemeral-storage: 1Gi}, limits: {memory: 2Gi}}}, {name: sidecar, resources: {requests: {cpu: 5m}}}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  initContainers: [{name: init, resources: {requests: {memory: 20Mi}}}],
  containers: [{name: oauth-openshift, resources: {requests: {cpu: 100m, ephemeral-storage: 1Gi, aro.openshift.io/swift-nic: "1", memory: 1Gi}, limits: {memory: 2Gi, aro.openshift.io/swift-nic: "1"}}}, {name: sidecar, resources: {requests: {cpu: 5m}}}]}}}}`,
		},
		{
			name: "maxUnavailable 1 when HighlyAvailable", options: hosted.ProfileOptions{HostedControlPlane: haHCP}, transform: "hypershift/pdb-by-availability",
			id:   contract.Identity{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Namespace: "openshift-authentication", Name: "oauth-openshift"},
			in:   `{apiVersion: policy/v1, kind: PodDisruptionBudget, spec: {minAvailable: 2, selector: {matchLabels: {app: oauth-openshift}}}}`,
			want: `{apiVersion: policy/v1, kind: PodDisruptionBudget, spec: {selector: {matchLabels: {app: oauth-openshift}}, maxUnavailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow}}`,
		},
		{
			name: "minAvailable 1 when SingleReplica", options: hosted.ProfileOptions{HostedControlPlane: singleHCP}, transform: "hypershift/pdb-by-availability",
			id:   contract.Identity{Group: "policy", Version: "v1", Resource: "poddisruptionbudgets", Namespace: "openshift-authentication", Name: "oauth-openshift"},
			in:   `{apiVersion: policy/v1, kind: PodDisruptionBudget, spec: {maxUnavailable: 25%, selector: {}, unhealthyPodEvictionPolicy: IfHealthyBudget}}`,
			want: `{apiVersion: policy/v1, kind: PodDisruptionBudget, spec: {selector: {}, minAvailable: 1, unhealthyPodEvictionPolicy: AlwaysAllow}}`,
		},
		{
			name: "a container's or init container's image naming a payload image gets its pull spec", options: components, transform: "hypershift/images-from-payload", id: deployment("console"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  initContainers: [{name: i, image: cli}],
  containers: [{name: a, image: oauth-server}, {name: b, image: "quay.io/x:v1"}, {name: c}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  initContainers: [{name: i, image: "quay.io/cli@sha256:2"}],
  containers: [{name: a, image: "quay.io/oauth-server@sha256:1"}, {name: b, image: "quay.io/x:v1"}, {name: c}]}}}}`,
		},
		{
			name: "no payload images, no transform", transform: "hypershift/images-from-payload", id: deployment("console"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: a, image: oauth-server}]}}}}`, want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: a, image: oauth-server}]}}}}`,
			none: true,
		},
		{
			name: "both konnectivity proxies, their volumes, and the proxy environment of the named container", options: components, transform: "hypershift/konnectivity-proxy", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: oauth-openshift, env: [{name: HTTPS_PROXY, value: "http://corp:3128"}, {name: NO_PROXY, value: corp}]}, {name: audit-logs}],
  volumes: [{name: config, configMap: {name: config}}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [
    {name: oauth-openshift, env: [{name: HTTPS_PROXY, value: "http://127.0.0.1:8092"}, {name: NO_PROXY, value: "kube-apiserver,audit-webhook"}, {name: HTTP_PROXY, value: "http://127.0.0.1:8092"}, {name: ALL_PROXY, value: "socks5://127.0.0.1:8090"}]},
    {name: audit-logs},
    {name: konnectivity-proxy-https, image: "quay.io/cpo@sha256:3", command: [/usr/bin/control-plane-operator, konnectivity-https-proxy],
     args: [run, --serving-port=8092, --connect-directly-to-cloud-apis=true],
     env: [{name: KUBECONFIG, value: /etc/kubernetes/secrets/kubeconfig/kubeconfig}],
     resources: {requests: {cpu: 10m, memory: 30Mi}},
     securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}},
     volumeMounts: [{name: kubeconfig, mountPath: /etc/kubernetes/secrets/kubeconfig}, {name: konnectivity-proxy-cert, mountPath: /etc/konnectivity/proxy-client}, {name: konnectivity-proxy-ca, mountPath: /etc/konnectivity/proxy-ca}]},
    {name: konnectivity-proxy-socks5, image: "quay.io/cpo@sha256:3", command: [/usr/bin/control-plane-operator, konnectivity-socks5-proxy],
     args: [run, --resolve-from-guest-cluster-dns=true, --resolve-from-management-cluster-dns=true],
     env: [{name: KUBECONFIG, value: /etc/kubernetes/secrets/kubeconfig/kubeconfig}],
     resources: {requests: {cpu: 10m, memory: 30Mi}},
     securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}},
     volumeMounts: [{name: kubeconfig, mountPath: /etc/kubernetes/secrets/kubeconfig}, {name: konnectivity-proxy-cert, mountPath: /etc/konnectivity/proxy-client}, {name: konnectivity-proxy-ca, mountPath: /etc/konnectivity/proxy-ca}]}],
  volumes: [{name: config, configMap: {name: config}},
    {name: kubeconfig, secret: {secretName: service-network-admin-kubeconfig, defaultMode: 416}},
    {name: konnectivity-proxy-cert, secret: {secretName: konnectivity-client, defaultMode: 416}},
    {name: konnectivity-proxy-ca, configMap: {name: konnectivity-ca-bundle}}]}}}}`,
		},
		{
			name: "the SOCKS5 proxy alone, on the pod's own kubeconfig volume", options: hosted.ProfileOptions{Components: hosted.ComponentOptions{
				Images:       map[string]string{hosted.ImageControlPlaneOperator: "cpo"},
				Konnectivity: []hosted.KonnectivityProxy{{Workload: "ingress", Mode: hosted.KonnectivitySOCKS5, SOCKS5: hosted.KonnectivitySOCKS5Options{ServingPort: 1080, DisableResolver: &yes}, ProxyEnv: hosted.ProxyEnv{Containers: []string{"ingress"}}}},
			}}, transform: "hypershift/konnectivity-proxy", id: deployment("ingress"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: ingress}], volumes: [{name: kubeconfig, secret: {secretName: mine}}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: ingress, env: [{name: ALL_PROXY, value: "socks5://127.0.0.1:1080"}]},
    {name: konnectivity-proxy-socks5, image: cpo, command: [/usr/bin/control-plane-operator, konnectivity-socks5-proxy],
     args: [run, --serving-port=1080, --disable-resolver=true],
     env: [{name: KUBECONFIG, value: /etc/kubernetes/secrets/kubeconfig/kubeconfig}],
     resources: {requests: {cpu: 10m, memory: 30Mi}},
     securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}},
     volumeMounts: [{name: kubeconfig, mountPath: /etc/kubernetes/secrets/kubeconfig}, {name: konnectivity-proxy-cert, mountPath: /etc/konnectivity/proxy-client}, {name: konnectivity-proxy-ca, mountPath: /etc/konnectivity/proxy-ca}]}],
  volumes: [{name: kubeconfig, secret: {secretName: mine}},
    {name: konnectivity-proxy-cert, secret: {secretName: konnectivity-client, defaultMode: 416}},
    {name: konnectivity-proxy-ca, configMap: {name: konnectivity-ca-bundle}}]}}}}`,
		},
		{
			name: "no konnectivity for a component not configured", options: components, transform: "hypershift/konnectivity-proxy", id: deployment("console"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: a}]}}}}`, want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: a}]}}}}`,
			none: true,
		},
		{
			name: "the availability prober first among the init containers, waiting for the guest API server", options: components, transform: "hypershift/availability-prober", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {initContainers: [{name: setup}], containers: [{name: a}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {initContainers: [
  {name: availability-prober, image: "quay.io/prober@sha256:4", imagePullPolicy: IfNotPresent,
   command: [/usr/bin/control-plane-operator, availability-prober, --target, "https://kube-apiserver:6443/readyz"],
   securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}},
  {name: setup}], containers: [{name: a}]}}}}`,
		},
		{
			name: "HyperShift's node affinity replaces the preferred terms and keeps the required ones", transform: "hypershift/control-plane-node-affinity", id: deployment("console"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {affinity: {nodeAffinity: {
  requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: arch, operator: In, values: [amd64]}]}]},
  preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {matchExpressions: [{key: ssd, operator: Exists}]}}]}}}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {}, spec: {affinity: {nodeAffinity: {
  requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: arch, operator: In, values: [amd64]}]}]},
  preferredDuringSchedulingIgnoredDuringExecution: [
    {weight: 50, preference: {matchExpressions: [{key: hypershift.openshift.io/control-plane, operator: In, values: ["true"]}]}},
    {weight: 100, preference: {matchExpressions: [{key: hypershift.openshift.io/cluster, operator: In, values: [` + hcp + `]}]}}]}}}}}}`,
		},
		{
			name: "a request-serving component under the dedicated topology tolerates and requires its request-serving nodes", options: hosted.ProfileOptions{HostedControlPlane: dedicatedHCP, Components: components.Components},
			transform: "hypershift/control-plane-node-affinity", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {tolerations: [{key: a, operator: Exists}]}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {}, spec: {tolerations: [{key: a, operator: Exists}, {key: hypershift.openshift.io/request-serving-component, operator: Equal, value: "true", effect: NoSchedule}],
  affinity: {nodeAffinity: {
  preferredDuringSchedulingIgnoredDuringExecution: [
    {weight: 50, preference: {matchExpressions: [{key: hypershift.openshift.io/control-plane, operator: In, values: ["true"]}]}},
    {weight: 100, preference: {matchExpressions: [{key: hypershift.openshift.io/cluster, operator: In, values: [` + hcp + `]}]}}],
  requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [
    {key: hypershift.openshift.io/request-serving-component, operator: In, values: ["true"]},
    {key: hypershift.openshift.io/cluster, operator: In, values: [` + hcp + `]},
    {key: pool, operator: In, values: [serving]}, {key: size, operator: In, values: [large]}]}]}}}}}}}`,
		},
		{
			name: "colocation with the pods of the hosted control plane, by host", transform: "hypershift/colocation", id: deployment("console"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {}, spec: {affinity: {podAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [
  {weight: 100, podAffinityTerm: {labelSelector: {matchLabels: {hypershift.openshift.io/hosted-control-plane: ` + hcp + `}}, topologyKey: kubernetes.io/hostname}}]}}}}}}`,
		},
		{
			name: "the request-serving label on a request-serving component's pods", options: components, transform: "hypershift/request-serving", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {labels: {app: oauth-openshift}}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {labels: {app: oauth-openshift, hypershift.openshift.io/request-serving-component: "true"}}, spec: {}}}}`,
		},
		{
			name: "not on another's", options: components, transform: "hypershift/request-serving", id: deployment("console"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {}}`, want: `{apiVersion: apps/v1, kind: Deployment, spec: {}}`,
			none: true,
		},
		{
			name: "a request-serving component of 3 replicas rolls out as the others", options: hosted.ProfileOptions{HostedControlPlane: haHCP, Components: components.Components},
			transform: "hypershift/replicas-by-availability", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 0}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3, revisionHistoryLimit: 2, strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 0, maxUnavailable: 1}}, template: {metadata: {}, spec: {}}}}`,
		},
		{
			name: "under the dedicated topology it runs 2, one of which may be unavailable", options: hosted.ProfileOptions{HostedControlPlane: dedicatedHCP, Components: components.Components},
			transform: "hypershift/replicas-by-availability", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 0}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 2, revisionHistoryLimit: 2, strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: 1}}, template: {metadata: {}, spec: {}}}}`,
		},
		{
			name: "spread across zones and hosts, required, over the pod's labels", options: components, transform: "hypershift/multi-zone-spread", id: deployment("oauth-openshift"),
			in: `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3, template: {metadata: {labels: {app: oauth-openshift}}, spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {x: y}}, topologyKey: rack}]}}}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {replicas: 3, template: {metadata: {labels: {app: oauth-openshift}}, spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [
  {labelSelector: {matchLabels: {x: y}}, topologyKey: rack},
  {labelSelector: {matchLabels: {app: oauth-openshift}}, topologyKey: topology.kubernetes.io/zone},
  {labelSelector: {matchLabels: {app: oauth-openshift}}, topologyKey: kubernetes.io/hostname}]}}}}}}`,
		},
		{
			name: "across zones by preference on OpenStack", options: hosted.ProfileOptions{HostedControlPlane: openStackHCP, Components: components.Components}, transform: "hypershift/multi-zone-spread",
			id: contract.Identity{Group: "apps", Version: "v1", Resource: "statefulsets", Namespace: "ns", Name: "oauth-openshift"},
			in: `{apiVersion: apps/v1, kind: StatefulSet, spec: {replicas: 2, template: {metadata: {labels: {app: a}}, spec: {}}}}`,
			want: `{apiVersion: apps/v1, kind: StatefulSet, spec: {replicas: 2, template: {metadata: {labels: {app: a}}, spec: {affinity: {podAntiAffinity: {
  preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {labelSelector: {matchLabels: {app: a}}, topologyKey: topology.kubernetes.io/zone}}],
  requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}, topologyKey: kubernetes.io/hostname}]}}}}}}`,
		},
		{
			name: "no spread for a single replica", options: components, transform: "hypershift/multi-zone-spread", id: deployment("oauth-openshift"),
			in:   `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {labels: {app: a}}, spec: {}}}}`,
			want: `{apiVersion: apps/v1, kind: Deployment, spec: {template: {metadata: {labels: {app: a}}, spec: {}}}}`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ran := runOpinion(t, tc.options, tc.transform, tc.id, tc.in)
			if want := map[bool]int{false: 1, true: 0}[tc.none]; ran != want {
				t.Errorf("%d copies of %s ran, want %d", ran, tc.transform, want)
			}
			if diff := cmp.Diff(yamlMap(t, tc.want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestRequestOverridesThatDoNotParse: a resource-request-override annotation HyperShift
// cannot read either makes the HostedControlPlane an error naming it; a quantity that does not
// parse is left out, as HyperShift leaves it out.
func TestRequestOverridesThatDoNotParse(t *testing.T) {
	for _, tc := range []struct {
		name, key, value string
		want             string // in the error; "" for none
	}{
		{"no container", hosted.AnnotationResourceRequestOverridePrefix + "/oauth-openshift", "cpu=1", "metadata.annotations[resource-request-override.hypershift.openshift.io/oauth-openshift]: want"},
		{"no quantity", hosted.AnnotationResourceRequestOverridePrefix + "/oauth-openshift.c", "cpu", `"cpu": want <resource>=<quantity>`},
		{"a quantity that does not parse", hosted.AnnotationResourceRequestOverridePrefix + "/oauth-openshift.c", "cpu=lots,memory=1G", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := parseHCP(t, "", map[string]string{tc.key: tc.value})
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "HostedControlPlane "+hcp+"/example") {
					t.Fatalf("error %v, want one saying %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := h.RequestOverrides()
			if diff := cmp.Diff(map[string]map[string]map[string]string{"oauth-openshift": {"c": {"memory": "1G"}}}, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestProfileTransformNames: the names a configuration may turn off are every name the
// hypershift profile may give a transform, those of the opinions that read the
// HostedControlPlane included.
func TestProfileTransformNames(t *testing.T) {
	names, ok := hosted.ProfileTransformNames(hosted.ProfileHyperShift)
	if !ok {
		t.Fatal("no hypershift profile")
	}
	for _, want := range []string{
		"hypershift/drop-standalone-scheduling", "hypershift/drop-workload-partitioning", "hypershift/pull-secret", "hypershift/restricted-security-context",
		"hypershift/volume-default-modes", "hypershift/image-pull-policy", "hypershift/termination-message-policy", "hypershift/default-uid",
		"hypershift/replicas-by-availability", "hypershift/debug-deployments", "hypershift/hcp-node-selector", "hypershift/hcp-tolerations",
		"hypershift/resource-request-overrides", "hypershift/api-critical-pdb", "hypershift/pdb-by-availability", "hypershift/drop-owner-references",
		"hypershift/images-from-payload", "hypershift/konnectivity-proxy", "hypershift/konnectivity-hcp-proxy", "hypershift/konnectivity-hcp-trust-bundles", "hypershift/availability-prober", "hypershift/control-plane-node-affinity",
		"hypershift/colocation", "hypershift/request-serving", "hypershift/multi-zone-spread",
		"hypershift/drop-autoscaler-pinning", "hypershift/drop-runtime-requests", "hypershift/withhold-management-ca-requests", "hypershift/monitor-own-namespace", "hypershift/monitor-own-targets",
	} {
		if !slices.Contains(names, want) {
			t.Errorf("%s is not among %v", want, names)
		}
	}
	if !slices.IsSorted(names) || len(slices.Compact(slices.Clone(names))) != len(names) {
		t.Errorf("names not sorted and unique: %v", names)
	}
	if _, ok := hosted.ProfileTransformNames("openshift"); ok {
		t.Error("an unknown profile has names")
	}
}

// TestAutoscalerPinning: a pod that tells the management cluster's autoscaler never to evict
// it loses that annotation (any other value than "true"); its other annotations stay.
func TestAutoscalerPinning(t *testing.T) {
	id := contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}
	deployment := func(annotations string) string {
		return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: oauth-openshift, namespace: openshift-authentication}\n" +
			"spec:\n  template:\n    metadata: {labels: {app: oauth}" + annotations + "}\n    spec: {containers: [{name: c, image: i}]}\n"
	}
	tests := []struct{ name, in, want string }{
		{"false: gone, and the mapping it was alone in", deployment(", annotations: {" + hosted.AnnotationSafeToEvict + ": 'false'}"), deployment("")},
		{"false beside another: only it goes", deployment(", annotations: {" + hosted.AnnotationSafeToEvict + ": 'false', a: b}"), deployment(", annotations: {a: b}")},
		{"true: kept", deployment(", annotations: {" + hosted.AnnotationSafeToEvict + ": 'true'}"), deployment(", annotations: {" + hosted.AnnotationSafeToEvict + ": 'true'}")},
		{"none: untouched", deployment(""), deployment("")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ran := runOpinion(t, hosted.ProfileOptions{}, "hypershift/drop-autoscaler-pinning", id, tc.in)
			if ran != 1 {
				t.Fatalf("%d transforms ran, want 1", ran)
			}
			if diff := cmp.Diff(yamlMap(t, tc.want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
