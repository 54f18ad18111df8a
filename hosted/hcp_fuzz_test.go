package hosted_test

import (
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// fuzzDeployment is an operand the hypershift profile's opinions all read: containers with
// arguments, requests and mounts, volumes of each kind, a service account.
const fuzzDeployment = `apiVersion: apps/v1
kind: Deployment
metadata: {name: oauth-openshift, namespace: ` + hcp + `, labels: {app: oauth-openshift}}
spec:
  replicas: 0
  selector: {matchLabels: {app: oauth-openshift}}
  template:
    metadata: {labels: {app: oauth-openshift}}
    spec:
      serviceAccountName: oauth-openshift
      nodeSelector: {node-role.kubernetes.io/master: ""}
      tolerations: [{key: node-role.kubernetes.io/master, operator: Exists, effect: NoSchedule}]
      containers:
      - name: oauth-openshift
        image: quay.io/openshift/oauth-server
        command: [/bin/bash, -ec]
        args: ["exec oauth-server osinserver --config=/var/config/system/configmaps/v4-0-config-system-cliconfig/v4-0-config-system-cliconfig --audit-log-path=/var/log/oauth-server/audit.log"]
        resources: {requests: {cpu: 10m, memory: 50Mi}}
        volumeMounts:
        - {name: audit-dir, mountPath: /var/log/oauth-server}
        - {name: config, mountPath: /var/config/system/configmaps/v4-0-config-system-cliconfig}
      volumes:
      - {name: audit-dir, hostPath: {path: /var/log/oauth-server}}
      - {name: config, configMap: {name: v4-0-config-system-cliconfig}}
`

// FuzzHostedControlPlane: any HostedControlPlane parses or fails with an error, without
// panicking; one that parses equals itself, answers every question the profile asks of it,
// and the hypershift profile built from it runs every opinion on an operand without
// panicking (an opinion may refuse the object with an error).
func FuzzHostedControlPlane(f *testing.F) {
	if seed, err := os.ReadFile("../examples/cluster-authentication-operator/fixtures-hcp.yaml"); err == nil {
		f.Add(seed)
	}
	f.Add([]byte("apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedControlPlane\nmetadata: {name: hcp, namespace: ns}\nspec: {controllerAvailabilityPolicy: SingleReplica, platform: {type: IBMCloud}}\n"))
	f.Add([]byte("apiVersion: hypershift.openshift.io/v1beta1\nkind: HostedControlPlane\nmetadata:\n  name: hcp\n  namespace: ns\n  annotations:\n    resource-request-override.hypershift.openshift.io/oauth-openshift.oauth-openshift: cpu=1,memory=x\n    hypershift.openshift.io/control-plane-priority-class: p\n    hypershift.openshift.io/debug-deployments: oauth-openshift\nspec:\n  nodeSelector: {a: b}\n  tolerations: [{key: k}]\n  labels: {l: v}\n  networking: {serviceNetwork: [{cidr: 10.0.0.0/16}]}\n  configuration: {proxy: {httpProxy: http://p:3128, noProxy: a,b}, apiServer: {audit: {profile: None}}}\n"))
	f.Add([]byte("kind: HostedControlPlane\napiVersion: hypershift.openshift.io/v1beta1\nspec: {platform: {aws: {region: 7}}}\n"))
	in, err := kyaml.Parse(fuzzDeployment)
	if err != nil {
		f.Fatal(err)
	}
	src := routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}}
	f.Fuzz(func(t *testing.T, data []byte) {
		parsed, err := contract.ParseObject(data)
		if err != nil {
			return
		}
		h, err := hosted.ParseHostedControlPlane(&unstructured.Unstructured{Object: parsed})
		if err != nil {
			return
		}
		if !h.Equal(h) {
			t.Fatal("a HostedControlPlane does not equal itself")
		}
		_, _, _, _ = h.DefaultNoProxy(), h.DebugComponents(), h.InClusterAPIServer(), h.RequestServingNodeSelector()
		if _, err := h.RequestOverrides(); err != nil {
			t.Fatalf("ParseHostedControlPlane accepted request overrides that do not read: %v", err)
		}
		for _, c := range hosted.APICriticalComponents() {
			if r := h.Replicas(c); r < 1 {
				t.Fatalf("%s: %d replicas", c, r)
			}
			_ = h.PriorityClass(c)
		}
		transforms, ok := hosted.Profile(hosted.ProfileHyperShift, hosted.ProfileOptions{HostedControlPlane: h})
		if !ok {
			t.Fatal("no hypershift profile")
		}
		ctx := transform.Context{Source: src, Cluster: routing.ClusterManagement, HCPNamespace: hcp, HostedControlPlane: h.Name}
		obj, ran := in.Copy(), 0
		for _, tr := range transforms {
			if !tr.Selects(src, routing.ClusterManagement) || (tr.Applies != nil && !tr.Applies(obj)) {
				continue
			}
			ran++
			if tr.Adds != nil {
				_, _ = tr.Adds(ctx, in.Copy())
			}
			if tr.Filter == nil {
				continue
			}
			f, err := tr.Filter(ctx)
			if err != nil {
				continue
			}
			if _, err := f.Filter([]*kyaml.RNode{obj}); err != nil {
				obj = in.Copy() // refused: the next opinion starts again from the operand
			}
		}
		if ran < 10 {
			t.Fatalf("%d opinions of the hypershift profile ran on a Deployment", ran)
		}
	})
}
