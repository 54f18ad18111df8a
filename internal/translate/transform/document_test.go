package transform_test

import (
	"encoding/base64"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/contracttest"
	"github.com/topolayer/topolayer/internal/translate/transform"
)

// TestDocumentPatches: a configured patch aimed at a document in a data key edits that
// document, in any of the three patch forms, and writes it back in the form it was read in
// (JSON with sorted keys, YAML, base64 in a Secret's data); what it cannot find is an error
// naming the key.
func TestDocumentPatches(t *testing.T) {
	const cliconfig = `{"apiVersion":"osin.config.openshift.io/v1","kind":"OsinServerConfig","servingInfo":{"bindAddress":"0.0.0.0:6443"}}`
	configMap := func(key, value string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cli, namespace: ns}\ndata:\n  " + key + ": '" + value + "'\n"
	}
	secret := "apiVersion: v1\nkind: Secret\nmetadata: {name: cfg, namespace: ns}\ndata:\n  config.yaml: " +
		base64.StdEncoding.EncodeToString([]byte("server:\n  port: 80\n  tls: false\n")) + "\n"
	tests := []struct {
		name   string
		object string
		patch  transform.Patch
		// want is the document's value after the patch (decoded from base64 for a Secret's
		// data); err a part of the error.
		want, err string
	}{
		{"a merge patch of a JSON document: JSON back, keys sorted", configMap("cli.json", cliconfig),
			transform.Patch{Merge: `{"kubeClientConfig":{"kubeConfig":"/var/run/kubeconfig"}}`, Document: &transform.Document{Key: "cli.json"}},
			`{"apiVersion":"osin.config.openshift.io/v1","kind":"OsinServerConfig","kubeClientConfig":{"kubeConfig":"/var/run/kubeconfig"},"servingInfo":{"bindAddress":"0.0.0.0:6443"}}`, ""},
		{"a strategic merge of a JSON document", configMap("cli.json", cliconfig),
			transform.Patch{StrategicMerge: "servingInfo: {bindAddress: 0.0.0.0:8443}\n", Document: &transform.Document{Key: "cli.json"}},
			`{"apiVersion":"osin.config.openshift.io/v1","kind":"OsinServerConfig","servingInfo":{"bindAddress":"0.0.0.0:8443"}}`, ""},
		{"a JSON patch of a YAML document in a Secret's data", secret,
			transform.Patch{JSON6902: `[{"op":"replace","path":"/server/tls","value":true}]`, Document: &transform.Document{Key: "config.yaml"}},
			"server:\n  port: 80\n  tls: true\n", ""},
		{"a missing key", configMap("cli.json", cliconfig),
			transform.Patch{Merge: `{"a":1}`, Document: &transform.Document{Key: "other.json"}}, "", `has no data key "other.json"`},
		{"not a ConfigMap or Secret", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n",
			transform.Patch{Merge: `{"a":1}`, Document: &transform.Document{Key: "k"}}, "", "is not a ConfigMap or Secret"},
		{"a value that is no document", configMap("cli.json", "{not: [json"),
			transform.Patch{Merge: `{"a":1}`, Document: &transform.Document{Key: "cli.json"}}, "", "not a YAML or JSON document"},
		{"a merge patch of the object itself", configMap("k", "v"),
			transform.Patch{Merge: `{"metadata":{"labels":{"a":"b"}}}`}, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.patch.Name = "p"
			tr, err := tc.patch.Transform()
			if err != nil {
				t.Fatal(err)
			}
			f, err := tr.Filter(transform.Context{})
			if err != nil {
				t.Fatal(err)
			}
			obj := yaml.MustParse(tc.object)
			out, err := f.Filter([]*yaml.RNode{obj})
			if contracttest.CheckErr(t, err, tc.err) {
				return
			}
			if tc.patch.Document == nil {
				if out[0].GetLabels()["a"] != "b" {
					t.Errorf("merge patch of the object: %s", out[0].MustString())
				}
				return
			}
			got := out[0].GetDataMap()[tc.patch.Document.Key]
			if out[0].GetKind() == "Secret" {
				raw, _ := base64.StdEncoding.DecodeString(out[0].GetDataMap()[tc.patch.Document.Key])
				got = string(raw)
			}
			if got != tc.want {
				t.Errorf("document:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// TestPatchForms: one patch form at a time, a document needs its key.
func TestPatchForms(t *testing.T) {
	for name, p := range map[string]transform.Patch{
		"two forms":                  {StrategicMerge: "a: 1\n", Merge: `{"a":1}`},
		"none":                       {},
		"a merge that is no mapping": {Merge: `[1]`},
		"a document without a key":   {Merge: `{"a":1}`, Document: &transform.Document{}},
	} {
		if _, err := p.Transform(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
