package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/configtest"
	"github.com/topolayer/topolayer/internal/oidctest"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// caoStandaloneConfig is the standalone configuration written for the
// cluster-authentication-operator.
const caoStandaloneConfig = "../../examples/cluster-authentication-operator/standalone.yaml"

// caoIdentityProviders are the identity providers TestCAOIdentityProviderFamilies gives the
// operator, in order (the index N of its copies v4-0-config-user-idp-N-*), with the copies
// the real operator writes for each: what the example's supplements declare by pattern.
var caoIdentityProviders = []struct {
	typ        string
	secrets    []string // copies, by suffix, that are Secrets
	configMaps []string // copies, by suffix, that are ConfigMaps
}{
	{"HTPasswd", []string{"file-data"}, nil},
	{"HTPasswd", []string{"file-data"}, nil},
	{"OpenID", []string{"client-secret"}, []string{"ca"}},
	{"GitHub", []string{"client-secret"}, []string{"ca"}},
	{"GitLab", []string{"client-secret"}, []string{"ca"}},
	{"Google", []string{"client-secret"}, nil},
	{"LDAP", []string{"bind-password"}, []string{"ca"}},
	{"Keystone", []string{"tls-client-cert", "tls-client-key"}, []string{"ca"}},
	{"BasicAuth", []string{"tls-client-cert", "tls-client-key"}, []string{"ca"}},
	{"RequestHeader", nil, []string{"ca"}},
}

// TestCAOIdentityProviderFamilies runs the real cluster-authentication-operator offline with
// two htpasswd identity providers and one of each other type (the OpenID provider's
// discovery document served on loopback), and checks that it writes exactly the copies of
// caoIdentityProviders, and that the shipped example places every one of them, hosted and
// standalone, with nothing rejected as Unspecified: its supplements declare the copies'
// families by name pattern.
func TestCAOIdentityProviderFamilies(t *testing.T) {
	cao, corpusInput := caoAndConfigObserverInput(t)
	in, _ := caoInputWithEveryIdentityProvider(t, corpusInput)

	// The resource syncer copies only in the runs where it comes after the config observer
	// that registers the copies (TestDeterminismCAO): run the two until one does.
	var out string
	var written []contract.Mutation
	for i := 0; i < 20 && len(written) == 0; i++ {
		out = filepath.Join(t.TempDir(), "output-dir")
		cmd := exec.Command(cao, "apply-configuration", "--input-dir", in, "--output-dir", out,
			"--now", "2025-08-07T22:38:20Z", "--controllers", "TODO-resourceSyncer,TODO-configObserver")
		log, _ := cmd.CombinedOutput() // it exits non-zero when it wrote under Unspecified
		dir, err := contract.ReadOutputDir(out, contract.ReadOptions{})
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, log)
		}
		for _, m := range dir.Mutations {
			if id := m.Identity(); id.Namespace == "openshift-authentication" && strings.HasPrefix(id.Name, "v4-0-config-user-idp-") {
				written = append(written, m)
			}
		}
	}
	var got, want []string
	for _, m := range written {
		got = append(got, m.Identity().Resource+"/"+m.Identity().Name)
	}
	for i, p := range caoIdentityProviders {
		for _, s := range p.secrets {
			want = append(want, fmt.Sprintf("secrets/v4-0-config-user-idp-%d-%s", i, s))
		}
		for _, c := range p.configMaps {
			want = append(want, fmt.Sprintf("configmaps/v4-0-config-user-idp-%d-%s", i, c))
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("the operator wrote these identity provider copies:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}

	for name, cfg := range map[string]string{"hosted": caoHostedConfig, "standalone": caoStandaloneConfig} {
		t.Run(name, func(t *testing.T) {
			js, errOut, err := run(t, "plan", "--config", cfg, "--from", out, "--operator", "cluster-authentication-operator", "-o", "json")
			var plan plans.Plan
			if jerr := json.Unmarshal([]byte(js), &plan); jerr != nil {
				t.Fatalf("plan -o json: %v (error %v)\n%s", jerr, err, errOut)
			}
			for _, e := range plan.Rejected() {
				t.Errorf("rejected %s (%s): %s", e.Source, e.Rule, e.Reason)
			}
			if err != nil {
				t.Errorf("plan: %v\n%s", err, errOut)
			}
			placed := 0
			for _, e := range plan.Entries {
				if !slices.Contains(got, e.Source.Resource+"/"+e.Source.Name) {
					continue
				}
				placed++
				if e.Disposition != routing.Apply || e.DeclaredBy != plans.DeclaredBySupplement || e.Class != contract.ClassManagement {
					t.Errorf("%s: %s by %s, class %s, declared by %q; want apply, Management, declared by the supplement", e.Source, e.Disposition, e.Rule, e.Class, e.DeclaredBy)
				}
			}
			if placed != len(got) {
				t.Errorf("%d identity provider copies in the plan, want %d", placed, len(got))
			}
		})
	}

	// Without the example's supplements, the copies are refused as Unspecified, and the
	// declarations plan proposes fold each family into the example's name patterns.
	t.Run("declarations proposed without the supplements", func(t *testing.T) {
		checkProposedFamilies(t, out, written)
	})
}

// checkProposedFamilies plans the real operator's output dir out with the hosted example
// stripped of its supplements' outputs, and checks that the declarations proposed name each
// identity provider family by one pattern (as the example does), that the snippet decodes
// strictly as the configuration's types, and that the plan made with it merged places every
// copy.
func checkProposedFamilies(t *testing.T, out string, written []contract.Mutation) {
	const operator = "cluster-authentication-operator"
	cfg, err := config.Load(caoHostedConfig)
	if err != nil {
		t.Fatal(err)
	}
	stripped := *cfg
	stripped.Operators = slices.Clone(cfg.Operators)
	i := slices.IndexFunc(stripped.Operators, func(o config.Operator) bool { return o.Name == operator })
	if i < 0 {
		t.Fatalf("%s runs no %s", caoHostedConfig, operator)
	}
	stripped.Operators[i].Supplements.Outputs = nil
	engine, err := topology.Engine(&stripped, operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := contract.ReadOutputDir(out, contract.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := engine.Declarations(engine.Plan(dir))
	snippet, err := d.YAML()
	if err != nil || snippet == nil {
		t.Fatalf("no snippet proposed (%v) for %d refused copies", err, len(written))
	}
	t.Logf("proposed for %d copies:\n%s", len(written), snippet)
	// The families of two or more copies (caoIdentityProviders); LDAP's bind password is alone.
	for p, suffixes := range map[string][]string{"secrets": {"file-data", "client-secret", "tls-client-cert", "tls-client-key"}, "configmaps": {"ca"}} {
		for _, s := range suffixes {
			pattern := "v4-0-config-user-idp-*-" + s
			if !slices.ContainsFunc(d.Notes, func(n string) bool {
				return strings.HasPrefix(n, p+" openshift-authentication/"+pattern+": a name pattern")
			}) {
				t.Errorf("no note proposes %s %s:\n%s", p, pattern, strings.Join(d.Notes, "\n"))
			}
		}
	}
	if !strings.Contains(string(snippet), "v4-0-config-user-idp-6-bind-password") || strings.Contains(string(snippet), "v4-0-config-user-idp-0-") {
		t.Errorf("the snippet does not name the lone copy by name and each family by its pattern:\n%s", snippet)
	}
	if !strings.Contains(string(snippet), "managementResources") || strings.Contains(string(snippet), "configurationResources") {
		t.Errorf("the copies are not proposed in Management, as the example declares them:\n%s", snippet)
	}
	fragment, err := config.Decode(snippet)
	if err != nil {
		t.Fatalf("the snippet does not decode as a configuration: %v\n%s", err, snippet)
	}
	engine, err = topology.Engine(configtest.MergeFragment(t, &stripped, fragment), operator, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range engine.Plan(dir).Entries {
		if e.Disposition == routing.Rejected {
			t.Errorf("with the snippet merged, %s is rejected (%s): %s", e.Source, e.Rule, e.Reason)
		}
	}
}

// caoInputWithEveryIdentityProvider copies a corpus input directory of the
// cluster-authentication-operator and gives its config.openshift.io oauths/cluster the
// identity providers of caoIdentityProviders, with the Secrets and ConfigMaps they name in
// openshift-config. The CA bundles are the certificate of a loopback TLS server that serves
// the OpenID provider's discovery document (the operator reads it); the Keystone and
// BasicAuth client certificates are made for client authentication, as the operator checks.
// It returns the input directory and the OpenID provider's issuer URL.
func caoInputWithEveryIdentityProvider(t *testing.T, corpusInput string) (string, string) {
	t.Helper()
	in := filepath.Join(t.TempDir(), "input-dir")
	// cp keeps the corpus's read-only modes; chmod makes the copy writable.
	for _, argv := range [][]string{{"cp", "-R", corpusInput, in}, {"chmod", "-R", "u+w", in}} {
		if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
	issuer, caBytes := oidctest.Provider(t, nil)
	caPEM := string(caBytes)
	certPEM, keyPEM := clientCertificate(t)

	ref := func(name string) map[string]any { return map[string]any{"name": name} }
	provider := func(name, typ, field string, spec map[string]any) map[string]any {
		return map[string]any{"name": name, "mappingMethod": "claim", "type": typ, field: spec}
	}
	idps := []any{
		provider("htpasswd-a", "HTPasswd", "htpasswd", map[string]any{"fileData": ref("htpass-a")}),
		provider("htpasswd-b", "HTPasswd", "htpasswd", map[string]any{"fileData": ref("htpass-b")}),
		provider("oidc", "OpenID", "openID", map[string]any{"clientID": "id", "clientSecret": ref("oidc-secret"), "ca": ref("oidc-ca"), "issuer": issuer,
			"claims": map[string]any{"preferredUsername": []any{"preferred_username"}, "name": []any{"name"}, "email": []any{"email"}}}),
		provider("github", "GitHub", "github", map[string]any{"clientID": "id", "clientSecret": ref("github-secret"), "ca": ref("github-ca"),
			"hostname": "github.example.com", "organizations": []any{"example"}}),
		provider("gitlab", "GitLab", "gitlab", map[string]any{"clientID": "id", "clientSecret": ref("gitlab-secret"), "ca": ref("gitlab-ca"), "url": "https://gitlab.example.com"}),
		provider("google", "Google", "google", map[string]any{"clientID": "id", "clientSecret": ref("google-secret"), "hostedDomain": "example.com"}),
		provider("ldap", "LDAP", "ldap", map[string]any{"url": "ldap://ldap.example.com/ou=users,dc=example,dc=com?uid", "bindDN": "cn=admin",
			"bindPassword": ref("ldap-bind"), "ca": ref("ldap-ca"),
			"attributes": map[string]any{"id": []any{"dn"}, "preferredUsername": []any{"uid"}, "name": []any{"cn"}, "email": []any{"mail"}}}),
		provider("keystone", "Keystone", "keystone", map[string]any{"url": "https://keystone.example.com:5000", "domainName": "default",
			"ca": ref("keystone-ca"), "tlsClientCert": ref("keystone-cert"), "tlsClientKey": ref("keystone-key")}),
		provider("basic", "BasicAuth", "basicAuth", map[string]any{"url": "https://basic.example.com/auth",
			"ca": ref("basic-ca"), "tlsClientCert": ref("basic-cert"), "tlsClientKey": ref("basic-key")}),
		provider("request-header", "RequestHeader", "requestHeader", map[string]any{"loginURL": "https://login.example.com/login?then=${url}",
			"challengeURL": "https://login.example.com/challenge?then=${url}", "ca": ref("request-header-ca"),
			"clientCommonNames": []any{"proxy"}, "headers": []any{"X-Remote-User"}}),
	}
	if len(idps) != len(caoIdentityProviders) {
		t.Fatalf("%d identity providers, %d expectations", len(idps), len(caoIdentityProviders))
	}
	oauths := filepath.Join(in, "cluster-scoped-resources", "config.openshift.io", "oauths.yaml")
	var list map[string]any
	readYAML(t, oauths, &list)
	items, _ := list["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("%s: %d OAuth objects, want 1", oauths, len(items))
	}
	items[0].(map[string]any)["spec"] = map[string]any{"identityProviders": idps}
	writeYAML(t, oauths, list)

	object := func(kind, name string, field string, data map[string]any) any {
		return map[string]any{"apiVersion": "v1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": "openshift-config"}, field: data}
	}
	var secrets, configMaps []any
	for name, data := range map[string]map[string]any{
		"htpass-a": {"htpasswd": "a:$2y$05$unused"}, "htpass-b": {"htpasswd": "b:$2y$05$unused"},
		"oidc-secret": {"clientSecret": "s"}, "github-secret": {"clientSecret": "s"}, "gitlab-secret": {"clientSecret": "s"},
		"google-secret": {"clientSecret": "s"}, "ldap-bind": {"bindPassword": "s"},
		"keystone-cert": {"tls.crt": certPEM}, "keystone-key": {"tls.key": keyPEM},
		"basic-cert": {"tls.crt": certPEM}, "basic-key": {"tls.key": keyPEM},
	} {
		secrets = append(secrets, object("Secret", name, "stringData", data))
	}
	for _, name := range []string{"oidc-ca", "github-ca", "gitlab-ca", "ldap-ca", "keystone-ca", "basic-ca", "request-header-ca"} {
		configMaps = append(configMaps, object("ConfigMap", name, "data", map[string]any{"ca.crt": caPEM}))
	}
	// The input directory holds objects as a server returns them: Secret data, not stringData.
	for _, s := range secrets {
		s := s.(map[string]any)
		s["data"] = encodeSecretData(s["stringData"].(map[string]any))
		delete(s, "stringData")
	}
	dir := filepath.Join(in, "namespaces", "openshift-config")
	writeYAML(t, filepath.Join(dir, "openshift-config.yaml"), map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "openshift-config"}})
	writeYAML(t, filepath.Join(dir, "core", "secrets.yaml"), map[string]any{"apiVersion": "v1", "kind": "SecretList", "metadata": map[string]any{}, "items": secrets})
	writeYAML(t, filepath.Join(dir, "core", "configmaps.yaml"), map[string]any{"apiVersion": "v1", "kind": "ConfigMapList", "metadata": map[string]any{}, "items": configMaps})
	return in, issuer
}

// clientCertificate returns a self-signed certificate for client authentication and its
// key, PEM-encoded.
func clientCertificate(t *testing.T) (certPEM, keyPEM string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "topolayer-test-client"},
		NotBefore: time.Unix(0, 0), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})),
		string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}))
}

// encodeSecretData turns a Secret's stringData into its data, as the API server stores it.
func encodeSecretData(stringData map[string]any) map[string]any {
	data := map[string]any{}
	for k, v := range stringData {
		data[k] = base64.StdEncoding.EncodeToString([]byte(v.(string)))
	}
	return data
}

func readYAML(t *testing.T, path string, into any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func writeYAML(t *testing.T, path string, obj any) {
	t.Helper()
	data, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
