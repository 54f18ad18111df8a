package fixtureparity

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"
)

// TestPairVolumes: a placed volume stands for the fixture volume of the same name, else of
// the paired object it mounts, else of the file the same flag or configuration field names
// in it; a volume two candidates claim stays unpaired.
func TestPairVolumes(t *testing.T) {
	const fixture = `spec: {template: {spec: {
  volumes: [{name: kubeconfig, secret: {secretName: k}}, {name: session-secret, secret: {secretName: oauth-openshift-session}},
            {name: logs, emptyDir: {}}, {name: master-ca, configMap: {name: ca}},
            {name: login, secret: {secretName: login-template}}, {name: error, secret: {secretName: error-template}}],
  containers: [{name: server, args: [--audit-log-path=/var/run/kubernetes/audit.log],
    volumeMounts: [{name: logs, mountPath: /var/run/kubernetes}, {name: master-ca, mountPath: /etc/ca}]}]}}}`
	const placed = `spec: {template: {spec: {
  volumes: [{name: kubeconfig, secret: {secretName: k}}, {name: v4-session, secret: {secretName: ns--v4-session}},
            {name: audit-dir, emptyDir: {}}, {name: service-ca, configMap: {name: ns--service-ca}},
            {name: branding, secret: {secretName: ns--branding}}],
  containers: [{name: server, command: [/bin/bash, -c, "exec server --audit-log-path=/var/log/x/audit.log"],
    volumeMounts: [{name: audit-dir, mountPath: /var/log/x}, {name: service-ca, mountPath: /var/config/service-ca}]}]}}}`
	objects := map[string]string{"oauth-openshift-session": "ns--v4-session", "login-template": "ns--branding", "error-template": "ns--branding"}
	documents := [2]map[string]string{
		{"osin-config oauthConfig.masterCA": "/etc/ca/ca.crt"},
		{"osin-config oauthConfig.masterCA": "/var/config/service-ca/service-ca.crt"},
	}
	got := pairVolumes(readVolumeSide(parse(t, fixture)), readVolumeSide(parse(t, placed)), objects, documents)
	want := map[string]string{"v4-session": "session-secret", "audit-dir": "logs", "service-ca": "master-ca"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	leaves := renameVolumes(map[string]any{
		"spec.template.spec.volumes[name=v4-session].name":        "v4-session",
		"spec.template.spec.volumes[name=v4-session-2].name":      "v4-session-2",
		"spec.template.spec.volumes[name=audit-dir].emptyDir":     map[string]any{},
		"spec.template.spec.containers[name=server].volumeMounts": nil,
	}, got)
	wantLeaves := map[string]any{
		"spec.template.spec.volumes[name=session-secret].name":    "v4-session",
		"spec.template.spec.volumes[name=v4-session-2].name":      "v4-session-2",
		"spec.template.spec.volumes[name=logs].emptyDir":          map[string]any{},
		"spec.template.spec.containers[name=server].volumeMounts": nil,
	}
	if diff := cmp.Diff(wantLeaves, leaves); diff != "" {
		t.Errorf("renamed leaves (-want +got):\n%s", diff)
	}
}

func parse(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := sigsyaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}
