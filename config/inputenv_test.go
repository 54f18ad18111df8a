package config_test

import (
	"testing"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
)

// proxyEnv is an operator entry whose environment reads the cluster Proxy, as the CAO
// example's does; extra is appended to its envFromInputs.
func proxyEnv(extra string) string {
	return header + "operators:\n- name: a\n  command: [x]\n  env: {IMAGE: quay.io/x}\n  envFromInputs:\n" +
		"  - name: HTTPS_PROXY\n    valueFrom:\n      input: {group: config.openshift.io, resource: proxies, name: cluster}\n      fieldPath: status.httpsProxy\n" +
		"  - name: SSL_CERT_DIR\n    as: Directory\n    valueFrom:\n      input:\n        group: \"\"\n        resource: configmaps\n        namespace: openshift-config\n" +
		"        nameFrom: {group: config.openshift.io, resource: proxies, name: cluster, fieldPath: spec.trustedCA.name}\n      fieldPath: 'data[\"ca-bundle.crt\"]'\n" + extra
}

// TestInputEnvConfig: envFromInputs entries are checked field by field, each error naming
// the entry and the field.
func TestInputEnvConfig(t *testing.T) {
	const input = "    valueFrom:\n      input: {group: config.openshift.io, resource: proxies, name: cluster}\n      fieldPath: status.httpProxy\n"
	for _, tc := range []struct {
		name, in string
		want     []string // nil: valid
	}{
		{"proxy and its trusted CA", proxyEnv(""), nil},
		{"no name", proxyEnv("  - valueFrom: {input: {group: config.openshift.io, resource: proxies, name: cluster}, fieldPath: status.httpProxy}\n"), []string{"operators[0].envFromInputs[2].name", "Required"}},
		{"not a variable name", proxyEnv("  - name: HTTP-PROXY\n" + input), []string{"operators[0].envFromInputs[2].name", "HTTP-PROXY"}},
		{"the sandbox's HOME", proxyEnv("  - name: HOME\n" + input), []string{"operators[0].envFromInputs[2].name", "Forbidden", "sandbox"}},
		{"a kubeconfig", proxyEnv("  - name: KUBECONFIG\n" + input), []string{"operators[0].envFromInputs[2].name", "Forbidden"}},
		{"also in env", proxyEnv("  - name: IMAGE\n" + input), []string{"operators[0].envFromInputs[2].name", "Duplicate", "also in env"}},
		{"twice", proxyEnv("  - name: HTTPS_PROXY\n" + input), []string{"operators[0].envFromInputs[2].name", "also envFromInputs[0]"}},
		{"unknown form", proxyEnv("  - name: NO_PROXY\n    as: Secret\n" + input), []string{"operators[0].envFromInputs[2].as", "Unsupported value"}},
		{"no field path", proxyEnv("  - name: NO_PROXY\n    valueFrom: {input: {group: config.openshift.io, resource: proxies, name: cluster}}\n"), []string{"operators[0].envFromInputs[2].valueFrom.fieldPath", "Required"}},
		{"a JSONPath with its dollar", proxyEnv("  - name: NO_PROXY\n    valueFrom: {input: {group: config.openshift.io, resource: proxies, name: cluster}, fieldPath: $.status.noProxy}\n"), []string{"operators[0].envFromInputs[2].valueFrom.fieldPath", "without the leading $"}},
		{"a field path that does not parse", proxyEnv("  - name: NO_PROXY\n    valueFrom: {input: {group: config.openshift.io, resource: proxies, name: cluster}, fieldPath: 'status noProxy'}\n"), []string{"operators[0].envFromInputs[2].valueFrom.fieldPath", "not a field path"}},
		{"a kind for a resource", proxyEnv("  - name: NO_PROXY\n    valueFrom: {input: {group: config.openshift.io, resource: Proxy, name: cluster}, fieldPath: status.noProxy}\n"), []string{"operators[0].envFromInputs[2].valueFrom.input.resource", `did you mean "proxies"`}},
		{"no name nor nameFrom", proxyEnv("  - name: NO_PROXY\n    valueFrom: {input: {group: config.openshift.io, resource: proxies}, fieldPath: status.noProxy}\n"), []string{"operators[0].envFromInputs[2].valueFrom.input.name", "Required", "nameFrom"}},
		{"name and nameFrom", proxyEnv("  - name: NO_PROXY\n    valueFrom:\n      input: {resource: configmaps, namespace: a, name: b, nameFrom: {group: config.openshift.io, resource: proxies, name: cluster, fieldPath: spec.x}}\n      fieldPath: data.x\n"), []string{"operators[0].envFromInputs[2].valueFrom.input.nameFrom", "exclusive"}},
		{"nameFrom without its field", proxyEnv("  - name: NO_PROXY\n    valueFrom:\n      input: {resource: configmaps, namespace: a, nameFrom: {group: config.openshift.io, resource: proxies, name: cluster}}\n      fieldPath: data.x\n"), []string{"operators[0].envFromInputs[2].valueFrom.input.nameFrom.fieldPath", "Required"}},
		{"a misspelled field", proxyEnv("  - name: NO_PROXY\n    valueFrom: {input: {group: config.openshift.io, resource: proxies, name: cluster}, fieldRef: status.noProxy}\n"), []string{"operators[0].envFromInputs[2].valueFrom.fieldRef", "unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := config.Parse([]byte(tc.in))
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.Operators[0].EnvFromInputs[1].ValueFrom.Input.NameFrom; got == nil || got.FieldPath != "spec.trustedCA.name" {
					t.Errorf("nameFrom = %+v", got)
				}
				return
			}
			wantRefused(t, err, tc.in, tc.want...)
		})
	}
}

// TestValidateInputEnv: what envFromInputs read must be among the operator's declared
// inputs; the error names the entry, the variable and the object.
func TestValidateInputEnv(t *testing.T) {
	cfg, err := config.Parse([]byte(proxyEnv("")))
	if err != nil {
		t.Fatal(err)
	}
	vars := cfg.Operators[0].EnvFromInputs
	proxy := contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "config.openshift.io", Version: "v1", Resource: "proxies"}, Name: "cluster"}
	trustedCA := contract.ResourceReference{ReferringResource: proxy, Type: contract.ImplicitNamespacedReference,
		ImplicitNamespacedReference: &contract.ImplicitNamespacedReferenceT{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: "openshift-config", NameJSONPath: "$.spec.trustedCA.name"}}
	otherNS := trustedCA
	otherNS.ImplicitNamespacedReference = &contract.ImplicitNamespacedReferenceT{ResourceTypeIdentifier: trustedCA.ImplicitNamespacedReference.ResourceTypeIdentifier, Namespace: "openshift-config-managed", NameJSONPath: "$.spec.trustedCA.name"}
	caOnly := trustedCA
	caOnly.ReferringResource = contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Group: "config.openshift.io", Version: "v1", Resource: "oauths"}, Name: "cluster"}
	exactCM := contract.ExactResourceID{ResourceTypeIdentifier: contract.ResourceTypeIdentifier{Version: "v1", Resource: "configmaps"}, Namespace: "openshift-config", Name: "user-ca-bundle"}
	in := func(exact []contract.ExactResourceID, refs ...contract.ResourceReference) *contract.InputResources {
		return &contract.InputResources{ApplyConfigurationResources: contract.ResourceList{ExactResources: exact, ResourceReferences: refs}}
	}
	for _, tc := range []struct {
		name string
		in   *contract.InputResources
		want []string // nil: declared
	}{
		{"the proxy and a reference to its CA", in([]contract.ExactResourceID{proxy}, trustedCA), nil},
		{"the reference declares the proxy, its referring object", in(nil, trustedCA), nil},
		{"a reference to ConfigMaps of another namespace", in([]contract.ExactResourceID{proxy}, otherNS), []string{"envFromInputs[1].valueFrom.input", "SSL_CERT_DIR", "not among the operator's inputs"}},
		{"only the CA's ConfigMaps", in(nil, caOnly), []string{"envFromInputs[0].valueFrom.input", "HTTPS_PROXY", "proxies.config.openshift.io cluster", "not among the operator's inputs", "exactResources", "envFromInputs[1].valueFrom.input.nameFrom"}},
		{"an exact ConfigMap does not cover a name read at run time", in([]contract.ExactResourceID{proxy, exactCM}), []string{"envFromInputs[1].valueFrom.input", "SSL_CERT_DIR", "resourceReferences"}},
		{"nothing declared", nil, []string{"envFromInputs[0]", "envFromInputs[1]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := config.ValidateInputEnv(vars, tc.in)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantRefused(t, err, tc.name, tc.want...)
		})
	}
}
