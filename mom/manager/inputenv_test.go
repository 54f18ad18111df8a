package manager

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
)

// inputObject decodes one gathered input of group/resource from YAML.
func inputObject(t *testing.T, group, resource, doc string) *contract.InputObject {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	return &contract.InputObject{Group: group, Resource: resource, Namespace: u.GetNamespace(), Object: u}
}

// TestInputEnv: the variables of envFromInputs are read from the gathered inputs; an
// absent object, field or empty value leaves the variable unset; File and Directory hold
// paths of files written for the run.
func TestInputEnv(t *testing.T) {
	proxyRef := config.InputObjectRef{Group: "config.openshift.io", Resource: "proxies", Name: "cluster"}
	proxyVar := func(name, field string) config.InputEnvVar {
		return config.InputEnvVar{Name: name, ValueFrom: config.InputField{Input: proxyRef, FieldPath: field}}
	}
	caVar := func(as config.InputEnvForm) config.InputEnvVar {
		return config.InputEnvVar{Name: "SSL_CERT_DIR", As: as, ValueFrom: config.InputField{FieldPath: `data["ca-bundle.crt"]`,
			Input: config.InputObjectRef{Resource: "configmaps", Namespace: "openshift-config",
				NameFrom: &config.InputNameRef{Group: "config.openshift.io", Resource: "proxies", Name: "cluster", FieldPath: "spec.trustedCA.name"}}}}
	}
	vars := []config.InputEnvVar{proxyVar("HTTP_PROXY", "status.httpProxy"), proxyVar("HTTPS_PROXY", "status.httpsProxy"), proxyVar("NO_PROXY", "status.noProxy"), caVar(config.InputEnvDirectory)}
	proxy := func(status string) *contract.InputObject {
		return inputObject(t, "config.openshift.io", "proxies", "apiVersion: config.openshift.io/v1\nkind: Proxy\nmetadata: {name: cluster}\nspec: {trustedCA: {name: user-ca-bundle}}\nstatus: "+status)
	}
	ca := inputObject(t, "", "configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: user-ca-bundle, namespace: openshift-config}\ndata: {ca-bundle.crt: PEM}")
	otherCA := inputObject(t, "", "configmaps", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: user-ca-bundle, namespace: openshift-config-managed}\ndata: {ca-bundle.crt: OTHER}")
	secret := inputObject(t, "", "secrets", "apiVersion: v1\nkind: Secret\nmetadata: {name: creds, namespace: ns}\ndata: {token: c2VjcmV0}") // "secret"
	for _, tc := range []struct {
		name      string
		vars      []config.InputEnvVar
		objs      []*contract.InputObject
		want      map[string]string // "<dir>" stands for the run's directory
		wantUnset []string
		files     map[string]string // relative to the run's directory
		wantErr   string
	}{
		{name: "a proxy and its trusted CA", vars: vars,
			objs:      []*contract.InputObject{otherCA, ca, proxy("{httpsProxy: 'https://proxy.corp:3128', noProxy: '.cluster.local,10.0.0.0/16'}")},
			want:      map[string]string{"HTTPS_PROXY": "https://proxy.corp:3128", "NO_PROXY": ".cluster.local,10.0.0.0/16", "SSL_CERT_DIR": "<dir>/env/SSL_CERT_DIR.d"},
			wantUnset: []string{"HTTP_PROXY"},
			files:     map[string]string{"env/SSL_CERT_DIR.d/value": "PEM"}},
		{name: "no Proxy: all unset", vars: vars, objs: []*contract.InputObject{ca}, wantUnset: []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "SSL_CERT_DIR"}},
		{name: "empty values are unset", vars: vars, objs: []*contract.InputObject{ca, proxy("{httpProxy: '', httpsProxy: ''}")}, want: map[string]string{"SSL_CERT_DIR": "<dir>/env/SSL_CERT_DIR.d"}, wantUnset: []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"}},
		{name: "the named CA is not gathered", vars: []config.InputEnvVar{caVar(config.InputEnvFile)}, objs: []*contract.InputObject{otherCA, proxy("{}")}, wantUnset: []string{"SSL_CERT_DIR"}},
		{name: "as a file", vars: []config.InputEnvVar{caVar(config.InputEnvFile)}, objs: []*contract.InputObject{ca, proxy("{}")},
			want: map[string]string{"SSL_CERT_DIR": "<dir>/env/SSL_CERT_DIR"}, files: map[string]string{"env/SSL_CERT_DIR": "PEM"}},
		{name: "a number in JSON", vars: []config.InputEnvVar{{Name: "GEN", ValueFrom: config.InputField{Input: proxyRef, FieldPath: "metadata.generation"}}},
			objs: []*contract.InputObject{inputObject(t, "config.openshift.io", "proxies", "metadata: {name: cluster, generation: 3}")}, want: map[string]string{"GEN": "3"}},
		{name: "a Secret's data decoded", vars: []config.InputEnvVar{{Name: "TOKEN", ValueFrom: config.InputField{Input: config.InputObjectRef{Resource: "secrets", Namespace: "ns", Name: "creds"}, FieldPath: "data.token"}}},
			objs: []*contract.InputObject{secret}, want: map[string]string{"TOKEN": "secret"}},
		{name: "an object is not a value", vars: []config.InputEnvVar{proxyVar("HTTPS_PROXY", "status")}, objs: []*contract.InputObject{proxy("{httpsProxy: x}")},
			wantErr: "envFromInputs[0] (HTTPS_PROXY): proxies.config.openshift.io cluster: status: an object or a list, not a value"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			env, unset, err := inputEnv(tc.vars, tc.objs, dir)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want map[string]string
			for k, v := range tc.want {
				if want == nil {
					want = map[string]string{}
				}
				want[k] = strings.ReplaceAll(v, "<dir>", dir)
			}
			if diff := cmp.Diff(want, env); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantUnset, unset); diff != "" {
				t.Errorf("unset (-want +got):\n%s", diff)
			}
			for f, content := range tc.files {
				data, err := os.ReadFile(filepath.Join(dir, f))
				if err != nil || string(data) != content {
					t.Errorf("%s: %q, %v; want %q", f, data, err, content)
				}
			}
		})
	}
}
