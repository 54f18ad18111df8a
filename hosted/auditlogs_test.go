package hosted_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/translate/transform"
	"github.com/topolayer/topolayer/routing"
)

// TestAuditLogsSidecar: a component named in auditLogs gets the audit-logs sidecar that
// prints its audit log file to the pod's log, reading the flag wherever the container passes
// it (a word of its arguments, or its start script's text) and mounting the volume that holds
// the file, where the container mounts it. A log to stdout needs no sidecar; a file that no
// mounted volume holds, or a relative one, is an error naming the container. The file's path
// is the sidecar's argument, never its script's text.
func TestAuditLogsSidecar(t *testing.T) {
	deployment := func(container string) string {
		return `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [` + container + `],
  volumes: [{name: logs, emptyDir: {}}, {name: audit-dir, emptyDir: {}}, {name: config, configMap: {name: c}}]}}}}`
	}
	sidecar := func(file, volume, mountPath string) string {
		return `{name: audit-logs, image: quay.io/cli, imagePullPolicy: IfNotPresent, command: [/bin/bash],
  args: [-c, SCRIPT, audit-logs, "` + file + `"], resources: {requests: {cpu: 5m, memory: 10Mi}},
  securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}},
  volumeMounts: [{name: ` + volume + `, mountPath: ` + mountPath + `}]}`
	}
	const mounts = `volumeMounts: [{name: logs, mountPath: /var/run/kubernetes}, {name: audit-dir, mountPath: /var/log/oauth-server}, {name: config, mountPath: /var/log/oauth-server/config}]`
	for _, tc := range []struct {
		name      string
		container string
		want      string // the sidecar, "" for none
		err       string
	}{
		{"a flag of its own", `{name: s, args: [--audit-log-path=/var/run/kubernetes/audit.log], ` + mounts + `}`,
			sidecar("/var/run/kubernetes/audit.log", "logs", "/var/run/kubernetes"), ""},
		{"flag and value as two words", `{name: s, command: [server, --audit-log-path, /var/run/kubernetes/audit.log], ` + mounts + `}`,
			sidecar("/var/run/kubernetes/audit.log", "logs", "/var/run/kubernetes"), ""},
		{"in a start script, the deepest mount above it", `{name: s, command: [/bin/bash, -ec], args: ["exec server \\\n--audit-log-path=/var/log/oauth-server/audit.log \\\n--v=2"], ` + mounts + `}`,
			sidecar("/var/log/oauth-server/audit.log", "audit-dir", "/var/log/oauth-server"), ""},
		{"a path a shell would run", `{name: s, args: ["--audit-log-path=/var/log/oauth-server/$(reboot)"], ` + mounts + `}`,
			sidecar("/var/log/oauth-server/$(reboot)", "audit-dir", "/var/log/oauth-server"), ""},
		{"to stdout", `{name: s, args: [--audit-log-path=-], ` + mounts + `}`, "", ""},
		{"no audit log", `{name: s, args: [--v=2], ` + mounts + `}`, "", ""},
		{"in no mounted volume", `{name: s, args: [--audit-log-path=/var/audit.log], ` + mounts + `}`, "",
			`containers "s": --audit-log-path /var/audit.log: in no volume the container mounts`},
		{"relative", `{name: s, args: [--audit-log-path=audit.log], ` + mounts + `}`, "",
			`containers "s": --audit-log-path "audit.log": not an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := hosted.ProfileOptions{Components: hosted.ComponentOptions{Images: map[string]string{hosted.ImageCLI: "quay.io/cli"}, AuditLogs: []string{"oauth-openshift"}}}
			got, err := runAuditLogs(t, o, deployment(tc.container))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			containers := got["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
			want := []any{yamlMap(t, tc.container)}
			if tc.want != "" {
				want = append(want, yamlMap(t, tc.want))
				args := containers[len(containers)-1].(map[string]any)["args"].([]any)
				if !strings.Contains(args[1].(string), `"$1"`) || strings.Contains(args[1].(string), "/var/") {
					t.Errorf("the script names the file other than as its argument:\n%s", args[1])
				}
				args[1] = "SCRIPT"
			}
			if diff := cmp.Diff(want, containers); diff != "" {
				t.Errorf("containers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAuditLogsFollowTheAuditProfile: the sidecar follows the HostedControlPlane's audit
// profile (spec.configuration.apiServer.audit.profile) as HyperShift's oauth-openshift does:
// with None the server logs nothing and HyperShift removes the sidecar, so the opinion does
// not run; any other profile, or none named (the API's default), keeps it.
func TestAuditLogsFollowTheAuditProfile(t *testing.T) {
	const in = `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {
  containers: [{name: s, args: [--audit-log-path=/var/log/oauth-server/audit.log], volumeMounts: [{name: audit-dir, mountPath: /var/log/oauth-server}]}],
  volumes: [{name: audit-dir, emptyDir: {}}]}}}}`
	id := contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}
	for _, tc := range []struct {
		name, spec string
		sidecar    bool
	}{
		{"no configuration", "", true},
		{"the default profile", "{configuration: {apiServer: {audit: {profile: Default}}}}", true},
		{"request bodies", "{configuration: {apiServer: {audit: {profile: AllRequestBodies}}}}", true},
		{"None", "{configuration: {apiServer: {audit: {profile: None}}}}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := parseHCP(t, tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			o := hosted.ProfileOptions{HostedControlPlane: h,
				Components: hosted.ComponentOptions{Images: map[string]string{hosted.ImageCLI: "quay.io/cli"}, AuditLogs: []string{"oauth-openshift"}}}
			got, ran := runOpinion(t, o, "hypershift/audit-logs", id, in)
			containers := got["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
			if want := map[bool]int{true: 1, false: 0}[tc.sidecar]; ran != want {
				t.Errorf("hypershift/audit-logs ran %d times, want %d", ran, want)
			}
			if want := map[bool]int{true: 2, false: 1}[tc.sidecar]; len(containers) != want {
				t.Errorf("%d containers, want %d: %v", len(containers), want, containers)
			}
		})
	}
}

// runAuditLogs runs hypershift/audit-logs on a Deployment oauth-openshift and returns it.
func runAuditLogs(t *testing.T, o hosted.ProfileOptions, in string) (map[string]any, error) {
	t.Helper()
	transforms, _ := hosted.Profile(hosted.ProfileHyperShift, o)
	obj, err := kyaml.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	src := routing.Object{Class: contract.ClassManagement, Identity: contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}}
	ran := 0
	for _, tr := range transforms {
		if tr.Name != "hypershift/audit-logs" || !tr.Selects(src, routing.ClusterManagement) || tr.Match.Resource != "deployments" {
			continue
		}
		f, err := tr.Filter(transform.Context{Source: src, Cluster: routing.ClusterManagement, HCPNamespace: hcp})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Filter([]*kyaml.RNode{obj}); err != nil {
			return nil, err
		}
		ran++
	}
	if ran != 1 {
		t.Fatalf("hypershift/audit-logs ran %d times", ran)
	}
	return obj.Map()
}

// TestNoProxyNamesTheHCPNamespace: $(HCP_NAMESPACE) in the proxy environment's NO_PROXY
// stands for the namespace the workload lands in.
func TestNoProxyNamesTheHCPNamespace(t *testing.T) {
	o := hosted.ProfileOptions{Components: hosted.ComponentOptions{
		Images: map[string]string{hosted.ImageControlPlaneOperator: "cpo"},
		Konnectivity: []hosted.KonnectivityProxy{{Workload: "oauth-openshift", Mode: hosted.KonnectivityHTTPS,
			ProxyEnv: hosted.ProxyEnv{Containers: []string{"oauth-openshift"}, NoProxy: []string{"kube-apiserver", "oauth-openshift.$(HCP_NAMESPACE).svc.cluster.local"}}}},
	}}
	id := contract.Identity{Group: "apps", Version: "v1", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}
	m, _ := runOpinion(t, o, "hypershift/konnectivity-proxy", id, `{apiVersion: apps/v1, kind: Deployment, spec: {template: {spec: {containers: [{name: oauth-openshift}]}}}}`)
	c := m["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	var noProxy string
	for _, e := range c["env"].([]any) {
		if e.(map[string]any)["name"] == "NO_PROXY" {
			noProxy = e.(map[string]any)["value"].(string)
		}
	}
	if want := "kube-apiserver,oauth-openshift." + hcp + ".svc.cluster.local"; noProxy != want {
		t.Errorf("NO_PROXY %q, want %q", noProxy, want)
	}
}

// FuzzAuditLogsSidecar: whatever a container's arguments say, the audit-logs opinion adds a
// sidecar whose one mount is a mount of the container's, or none, or refuses with an error;
// it never panics, and the path is never in the script.
func FuzzAuditLogsSidecar(f *testing.F) {
	for _, seed := range []string{"--audit-log-path=/var/log/x/audit.log", "--audit-log-path /var/log/x/a", "--audit-log-path=-", "--audit-log-path=$(x)", "--audit-log-path", "--audit-log-path=/var/log/x/../../etc"} {
		f.Add(seed)
	}
	o := hosted.ProfileOptions{Components: hosted.ComponentOptions{Images: map[string]string{hosted.ImageCLI: "cli"}, AuditLogs: []string{"oauth-openshift"}}}
	f.Fuzz(func(t *testing.T, arg string) {
		doc, err := sigsyaml.Marshal(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "s", "args": []any{arg}, "volumeMounts": []any{map[string]any{"name": "logs", "mountPath": "/var/log/x"}}}},
			"volumes":    []any{map[string]any{"name": "logs", "emptyDir": map[string]any{}}},
		}}}})
		if err != nil {
			t.Skip()
		}
		got, err := runAuditLogs(t, o, string(doc))
		if err != nil {
			return
		}
		containers := got["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		if len(containers) == 1 {
			return
		}
		sidecar := containers[1].(map[string]any)
		mounts := sidecar["volumeMounts"].([]any)
		if m := mounts[0].(map[string]any); len(mounts) != 1 || m["name"] != "logs" || m["mountPath"] != "/var/log/x" {
			t.Errorf("sidecar mounts %v", mounts)
		}
		if script := sidecar["args"].([]any)[1].(string); strings.Contains(script, "/var/log/x") {
			t.Errorf("the path is in the script: %s", script)
		}
	})
}
