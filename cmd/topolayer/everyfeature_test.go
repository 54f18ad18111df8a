package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/util/cert"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// TestCAOEveryFeature runs the real cluster-authentication-operator, with every controller
// each shipped example runs, on inputs that use every feature of its configuration APIs at
// once: two htpasswd identity providers and one of each other type, the three custom
// templates, a token configuration, a component route for the OAuth server with its own
// serving certificate, a cluster Proxy with a trusted CA, and the Modern TLS profile. It
// folds each run's writes back into the inputs until they stop changing, then plans
// everything CAO wrote with the shipped hosted and standalone examples: each places every
// output, nothing Unspecified and nothing refused.
func TestCAOEveryFeature(t *testing.T) {
	cao, _ := caoAndConfigObserverInput(t)
	base := filepath.Join(os.Getenv("TOPOLAYER_CORPUS"), "cluster-authentication-operator", "test-data", "apply-configuration", "overall", "oauth-server-creation-minimal", "input-dir")
	if !isDirectory(base) {
		t.Skipf("TOPOLAYER_CORPUS=%q holds no cluster-authentication-operator oauth-server-creation-minimal input", os.Getenv("TOPOLAYER_CORPUS"))
	}
	in, _ := caoInputWithEveryIdentityProvider(t, caoFixtureInput(t, base, "AWS", "Modern", ""))
	withEveryConfigurationFeature(t, in)
	// What CAO declares it writes: the plan places nothing privileged that it does not.
	outputResources := caoOutputResources(t, cao)

	for name, cfgPath := range map[string]string{"hosted": caoHostedConfig, "standalone": caoStandaloneConfig} {
		t.Run(name, func(t *testing.T) {
			cfg, err := config.Load(cfgPath)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(cfg.Operators, func(o config.Operator) bool { return o.Name == "cluster-authentication-operator" })
			if i < 0 {
				t.Fatalf("%s: no operator cluster-authentication-operator", cfgPath)
			}
			out, runs := runCAOToFixpoint(t, cao, cfg.Operators[i], in, everyFeatureCopies...)
			js, errOut, err := run(t, "plan", "--config", cfgPath, "--from", out, "--operator", "cluster-authentication-operator",
				"--output-resources", outputResources, "-o", "json")
			var plan plans.Plan
			if jerr := json.Unmarshal([]byte(js), &plan); jerr != nil {
				t.Fatalf("plan -o json: %v (error %v)\n%s", jerr, err, errOut)
			}
			for _, e := range plan.Rejected() {
				t.Errorf("rejected %s %s (%s): %s", e.Class, e.Source, e.Rule, e.Reason)
			}
			if err != nil {
				t.Errorf("plan: %v\n%s", err, errOut)
			}
			written := map[string]bool{}
			for _, e := range plan.Entries {
				if strings.HasPrefix(e.Source.Name, "v4-0-config-user-") || e.Source.Name == "v4-0-config-system-custom-router-certs" {
					written[e.Source.Name] = true
				}
			}
			t.Logf("%d runs, %d entries, %d rejected; copies of the user's objects: %s", runs, len(plan.Entries), len(plan.Rejected()), strings.Join(slices.Sorted(func(yield func(string) bool) {
				for k := range written {
					if !yield(k) {
						return
					}
				}
			}), ", "))
			// The features reached the outputs: the template copies and the component
			// route's certificate, besides the identity providers' copies.
			for _, want := range everyFeatureCopies {
				if !written[want] {
					t.Errorf("CAO wrote no %s: the feature did not reach its output", want)
				}
			}
		})
	}
}

// everyFeatureCopies are copies CAO writes for the features withEveryConfigurationFeature
// sets: the templates' and the component route's certificate.
var everyFeatureCopies = []string{"v4-0-config-user-template-login", "v4-0-config-user-template-provider-selection", "v4-0-config-user-template-error", "v4-0-config-system-custom-router-certs"}

// withEveryConfigurationFeature gives the input directory in (already holding identity
// providers, caoInputWithEveryIdentityProvider) the rest of CAO's configuration features:
// custom login, provider selection and error templates and a token configuration in
// oauths/cluster, a component route for the OAuth server with its own serving certificate in
// ingresses/cluster, and a cluster Proxy with a trusted CA; with the Secrets and ConfigMaps
// they name in openshift-config.
func withEveryConfigurationFeature(t *testing.T, in string) {
	t.Helper()
	clusterObject := func(resource string, edit func(obj map[string]any)) {
		path := filepath.Join(in, "cluster-scoped-resources", "config.openshift.io", resource+".yaml")
		var list map[string]any
		readYAML(t, path, &list)
		items, _ := list["items"].([]any)
		if len(items) != 1 {
			t.Fatalf("%s: %d objects, want 1", path, len(items))
		}
		edit(items[0].(map[string]any))
		writeYAML(t, path, list)
	}
	spec := func(obj map[string]any) map[string]any {
		s, _ := obj["spec"].(map[string]any)
		if s == nil {
			s = map[string]any{}
			obj["spec"] = s
		}
		return s
	}
	const routeHost = "oauth.custom.example.com"
	clusterObject("oauths", func(o map[string]any) {
		s := spec(o)
		s["templates"] = map[string]any{
			"login": map[string]any{"name": "login-template"}, "providerSelection": map[string]any{"name": "providers-template"}, "error": map[string]any{"name": "error-template"},
		}
		s["tokenConfig"] = map[string]any{"accessTokenMaxAgeSeconds": int64(3600), "accessTokenInactivityTimeout": "600s"}
	})
	clusterObject("ingresses", func(o map[string]any) {
		spec(o)["componentRoutes"] = []any{map[string]any{
			"name": "oauth-openshift", "namespace": "openshift-authentication", "hostname": routeHost,
			"servingCertKeyPairSecret": map[string]any{"name": "custom-oauth-cert"},
		}}
	})
	proxyCA, _, err := cert.GenerateSelfSignedCertKey("proxy.corp.example", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	clusterObject("proxies", func(o map[string]any) {
		s := spec(o)
		s["httpsProxy"], s["noProxy"] = "https://proxy.corp.example:3129", ".cluster.local,.svc"
		s["trustedCA"] = map[string]any{"name": "user-ca-bundle"}
		o["status"] = map[string]any{"httpsProxy": "https://proxy.corp.example:3129", "noProxy": ".cluster.local,.svc"}
	})
	servingCert, servingKey, err := cert.GenerateSelfSignedCertKey(routeHost, nil, []string{routeHost})
	if err != nil {
		t.Fatal(err)
	}

	// Add to the Secrets and ConfigMaps of openshift-config the identity providers wrote.
	dir := filepath.Join(in, "namespaces", "openshift-config", "core")
	appendItems := func(file string, items ...any) {
		path := filepath.Join(dir, file)
		var list map[string]any
		readYAML(t, path, &list)
		l, _ := list["items"].([]any)
		list["items"] = append(l, items...)
		writeYAML(t, path, list)
	}
	secret := func(name, typ string, data map[string]any) any {
		return map[string]any{"apiVersion": "v1", "kind": "Secret", "type": typ,
			"metadata": map[string]any{"name": name, "namespace": "openshift-config"}, "data": encodeSecretData(data)}
	}
	appendItems("secrets.yaml",
		secret("login-template", "Opaque", map[string]any{"login.html": "<html>login</html>"}),
		secret("providers-template", "Opaque", map[string]any{"providers.html": "<html>providers</html>"}),
		secret("error-template", "Opaque", map[string]any{"errors.html": "<html>error</html>"}),
		secret("custom-oauth-cert", "kubernetes.io/tls", map[string]any{"tls.crt": string(servingCert), "tls.key": string(servingKey)}),
	)
	appendItems("configmaps.yaml", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "user-ca-bundle", "namespace": "openshift-config"},
		"data":     map[string]any{"ca-bundle.crt": string(proxyCA)}})
}

// caoOutputResources writes what the cluster-authentication-operator binary cao declares it
// writes (its output-resources) to a file and returns its path.
func caoOutputResources(t *testing.T, cao string) string {
	t.Helper()
	declared, err := exec.Command(cao, "output-resources").Output()
	if err != nil {
		t.Fatalf("%s output-resources: %v", cao, err)
	}
	path := filepath.Join(t.TempDir(), "output-resources.yaml")
	if err := os.WriteFile(path, declared, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
