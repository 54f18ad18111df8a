package main

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hosted"
	"github.com/topolayer/topolayer/internal/fixtureparity"
	"github.com/topolayer/topolayer/internal/golden"
)

// fixtureTestdata holds a small stand-in for HyperShift's fixtures and the golden reports of
// TestParityHyperShiftFixtures.
const fixtureTestdata = "testdata/fixtureparity"

// writeFixtureOutputs writes a small output directory of the cluster-authentication-operator:
// its OAuth server's Deployment and config ConfigMap.
func writeFixtureOutputs(t *testing.T) string {
	t.Helper()
	m := func(group, version, resource, name, body string) contract.Mutation {
		return contract.Mutation{Class: contract.ClassManagement, Metadata: contract.Metadata{
			Action: contract.ActionCreate, Namespace: "openshift-authentication", Name: name,
			ResourceType: contract.ResourceType{Group: group, Version: version, Resource: resource},
		}, Body: []byte(strings.TrimSpace(body) + "\n")}
	}
	out := filepath.Join(t.TempDir(), "output-dir")
	err := contract.WriteOutputDir(out, &contract.OutputDir{Mutations: []contract.Mutation{
		m("apps", "v1", "deployments", "oauth-openshift", `
apiVersion: apps/v1
kind: Deployment
metadata: {name: oauth-openshift, namespace: openshift-authentication}
spec:
  replicas: 0
  selector: {matchLabels: {app: oauth-openshift}}
  template:
    metadata: {labels: {app: oauth-openshift}}
    spec:
      containers:
      - name: oauth-openshift
        image: quay.io/openshift/origin-oauth-server:v4.2
        command: [oauth-server, osinserver]
        volumeMounts:
        - {name: v4-0-config-system-cliconfig, mountPath: /var/config/system/configmaps/v4-0-config-system-cliconfig}
      volumes:
      - name: v4-0-config-system-cliconfig
        configMap: {name: v4-0-config-system-cliconfig}`),
		m("", "v1", "configmaps", "v4-0-config-system-cliconfig", `
apiVersion: v1
kind: ConfigMap
metadata: {name: v4-0-config-system-cliconfig, namespace: openshift-authentication}
data:
  v4-0-config-system-cliconfig: '{"apiVersion":"osin.config.openshift.io/v1","kind":"OsinServerConfig","servingInfo":{"bindAddress":"0.0.0.0:6443","minTLSVersion":"VersionTLS12","cipherSuites":["TLS_AES_128_GCM_SHA256"]}}'`),
	}}, contract.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParityHyperShiftFixtures: --hypershift-fixtures prints the leaf-by-leaf report in each
// format and fails on the unexplained leaves; the golden files are refreshed with -update.
func TestParityHyperShiftFixtures(t *testing.T) {
	cfg, _ := fixtureConfig(t, func(*hosted.ComponentOptions) {})
	out := writeFixtureOutputs(t)
	base := []string{"--hypershift-fixtures", filepath.Join(fixtureTestdata, "fixtures"), "--config-hosted", cfg,
		"--hosted-control-plane", fixtureHCP, "--from", out, "--operator", "cluster-authentication-operator"}
	for _, format := range []string{"table", "wide", "json"} {
		t.Run(format, func(t *testing.T) {
			got, err := runParity(t, append(base, "-o", format)...)
			if !errors.Is(err, fixtureparity.ErrUnexplained) {
				t.Errorf("error %v, want unexplained leaves", err)
			}
			// The output directory is the test's own: keep its path out of the golden file.
			got = strings.ReplaceAll(got, out, "OUTPUT-DIR")
			golden.File(t, filepath.Join(fixtureTestdata, "golden", format+".txt"), []byte(got), "go test ./cmd/topolayer -run TestParityHyperShiftFixtures -update")
		})
	}
}

func TestParityHyperShiftFixturesFlags(t *testing.T) {
	dir := filepath.Join(fixtureTestdata, "fixtures")
	tests := map[string]struct {
		args    []string
		wantErr string
	}{
		"every required flag":  {args: []string{"--hypershift-fixtures", dir}, wantErr: "--config-hosted is required\n--from is required\n--operator is required"},
		"a standalone config":  {args: []string{"--hypershift-fixtures", dir, "--config-hosted", caoHostedConfig, "--from", "x", "--operator", "o", "--config-standalone", standaloneConfig}, wantErr: "--config-standalone: not used with --hypershift-fixtures, which compares the hosted placement with HyperShift's own"},
		"markdown is not kept": {args: []string{"--hypershift-fixtures", dir, "-o", "markdown"}, wantErr: `--output "markdown": must be one of json|table|wide|yaml with --hypershift-fixtures`},
		"no fixtures":          {args: []string{"--hypershift-fixtures", fixtureTestdata + "/absent", "--config-hosted", caoHostedConfig, "--from", "x", "--operator", "o"}, wantErr: "--hypershift-fixtures: open " + fixtureTestdata + "/absent: no such file or directory"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runParity(t, tc.args...)
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("got error %v, want %q", err, tc.wantErr)
			}
		})
	}
}
