package contract_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
)

func TestMatchName(t *testing.T) {
	const idp = "v4-0-config-user-idp-*-file-data"
	tests := []struct {
		name        string
		pattern, in string
		want        bool
	}{
		{"exact, equal", "v4-0-config-user-idp-0-file-data", "v4-0-config-user-idp-0-file-data", true},
		{"exact, other", "v4-0-config-user-idp-0-file-data", "v4-0-config-user-idp-1-file-data", false},
		{"one digit", idp, "v4-0-config-user-idp-0-file-data", true},
		{"two digits", idp, "v4-0-config-user-idp-12-file-data", true},
		{"empty segment", idp, "v4-0-config-user-idp--file-data", false},
		{"two segments", idp, "v4-0-config-user-idp-1-2-file-data", false},
		{"dotted segments", idp, "v4-0-config-user-idp-1.2-file-data", false},
		{"other suffix", idp, "v4-0-config-user-idp-0-client-secret", false},
		{"suffix missing", idp, "v4-0-config-user-idp-0", false},
		{"within a segment", "idp*-ca", "idp12-ca", true},
		{"within a segment, nothing for the wildcard", "idp*-ca", "idp-ca", false},
		{"trailing wildcard, one segment", "v4-0-config-user-template-*", "v4-0-config-user-template-login", true},
		{"trailing wildcard does not cross a dash", "v4-0-config-user-template-*", "v4-0-config-user-template-provider-selection", false},
		{"two wildcards", "v4-0-config-user-idp-*-tls-client-*", "v4-0-config-user-idp-7-tls-client-key", true},
		{"two wildcards, second missing", "v4-0-config-user-idp-*-tls-client-*", "v4-0-config-user-idp-7-tls-client-", false},
		{"a literal star is matched by a star", "a-*", "a-*", true},
		{"empty name", idp, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := contract.MatchName(tc.pattern, tc.in); got != tc.want {
				t.Errorf("MatchName(%q, %q) = %v, want %v", tc.pattern, tc.in, got, tc.want)
			}
		})
	}
}

func TestValidateNamePattern(t *testing.T) {
	tests := []struct {
		name, pattern, wantErr string
	}{
		{"exact name", "v4-0-config-user-idp-0-file-data", ""},
		{"one wildcard", "v4-0-config-user-idp-*-file-data", ""},
		{"two wildcards in two segments", "v4-0-config-user-idp-*-tls-client-*", ""},
		{"wildcard within a segment", "idp*-ca", ""},
		{"two side by side", "idp-**-ca", "two '*' side by side"},
		{"question mark", "idp-?-*", `'?' is not supported`},
		{"character class", "idp-[0-9]-*", `'[' is not supported`},
		{"escape", `idp-\*-ca`, `'\\' is not supported`},
		{"glob characters without a wildcard are an exact name", "idp-?-ca", ""},
		{"only a wildcard", "*", "no literal part"},
		{"only wildcards and separators", "*-*.*", "no literal part"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := contract.ValidateNamePattern(tc.pattern)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("ValidateNamePattern(%q): %v", tc.pattern, err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("ValidateNamePattern(%q) = %v, want an error saying %q", tc.pattern, err, tc.wantErr)
			}
		})
	}
}

// TestOutputResourcesNamePatterns: output-resources take name patterns in the names of
// exactResources entries, match writes by them, and refuse a '*' anywhere else, naming the
// field.
func TestOutputResourcesNamePatterns(t *testing.T) {
	tests := []struct {
		name, doc, wantErr string
		write              contract.Identity
		want               []contract.Class
	}{
		{
			name:  "pattern matches a family member",
			doc:   "managementResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: openshift-authentication, name: v4-0-config-user-idp-*-file-data}\n",
			write: contract.Identity{Version: "v1", Resource: "secrets", Namespace: "openshift-authentication", Name: "v4-0-config-user-idp-1-file-data"},
			want:  []contract.Class{contract.ClassManagement},
		},
		{
			name:  "pattern does not match another namespace",
			doc:   "managementResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: openshift-authentication, name: v4-0-config-user-idp-*-file-data}\n",
			write: contract.Identity{Version: "v1", Resource: "secrets", Namespace: "openshift-config", Name: "v4-0-config-user-idp-1-file-data"},
		},
		{
			name:  "pattern does not match another resource",
			doc:   "managementResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: openshift-authentication, name: v4-0-config-user-idp-*-ca}\n",
			write: contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-authentication", Name: "v4-0-config-user-idp-1-ca"},
		},
		{
			name:  "pattern does not match a generateName create",
			doc:   "managementResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: ns, name: a-*}\n",
			write: contract.Identity{Version: "v1", Resource: "secrets", Namespace: "ns", GenerateName: "a-"},
		},
		{
			name:    "wildcard in a namespace",
			doc:     "managementResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: openshift-*, name: a-*}\n",
			wantErr: "managementResources.exactResources[0].namespace: '*' is allowed only in the name",
		},
		{
			name:    "wildcard in a resource",
			doc:     "userWorkloadResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: \"*\", namespace: ns, name: a}\n",
			wantErr: "userWorkloadResources.exactResources[0].resource: '*' is allowed only in the name",
		},
		{
			name:    "wildcard in a generateName",
			doc:     "managementResources:\n  generatedNameResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: ns, name: a-*-}\n",
			wantErr: "managementResources.generatedNameResources[0].name: name pattern \"a-*-\": only exactResources take name patterns",
		},
		{
			name:    "wildcard in an eventing namespace",
			doc:     "managementResources:\n  eventingNamespaces: [\"openshift-*\"]\n",
			wantErr: "managementResources.eventingNamespaces[0]: '*' is allowed only in the name",
		},
		{
			name:    "invalid pattern",
			doc:     "configurationResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: ns, name: \"*\"}\n",
			wantErr: "configurationResources.exactResources[0].name: name pattern \"*\": no literal part",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := contract.ParseOutputResources([]byte(tc.doc))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := o.ClassesOf(tc.write)
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) {
				t.Errorf("ClassesOf(%s) = %v, want %v", tc.write, got, tc.want)
			}
		})
	}
}

// TestInputResourcesNamePatterns: an input pattern is read by listing its namespace, so a
// namespaced one is accepted and one without a namespace, or in a field that takes no
// pattern, is refused with the field named.
func TestInputResourcesNamePatterns(t *testing.T) {
	tests := []struct{ name, doc, wantErr string }{
		{"namespaced", "applyConfigurationResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: ns, name: a-*}\n", ""},
		{"cluster-scoped", "applyConfigurationResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: namespaces, name: a-*}\n",
			`applyConfigurationResources.exactResources[0].name: name pattern "a-*": an input pattern needs a namespace`},
		{"invalid", "applyConfigurationResources:\n  exactResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: ns, name: \"*\"}\n",
			`applyConfigurationResources.exactResources[0].name: name pattern "*": no literal part`},
		{"a referring resource", "applyConfigurationResources:\n  resourceReferences:\n  - referringResource: {group: \"\", version: v1, resource: configmaps, namespace: ns, name: a-*}\n" +
			"    type: ImplicitNamespacedReference\n    implicitNamespacedReference: {group: \"\", version: v1, resource: secrets, namespace: ns, nameJSONPath: .data.x}\n",
			`applyConfigurationResources.resourceReferences[0].referringResource[0].name: name pattern "a-*": only exactResources take name patterns`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := contract.ParseInputResources([]byte(tc.doc))
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatal(err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
			}
		})
	}
}

// FuzzMatchName: a pattern without '*' matches only itself; a name made from a valid
// pattern by putting a segment's worth of characters in place of each '*' matches it; and
// nothing panics.
func FuzzMatchName(f *testing.F) {
	f.Add("v4-0-config-user-idp-*-file-data", "v4-0-config-user-idp-0-file-data", "12")
	f.Add("idp*-ca", "idp-ca", "x")
	f.Add("a-*-b-*", "a-1-b-2", "")
	f.Add("cluster", "cluster", "-")
	f.Fuzz(func(t *testing.T, pattern, name, fill string) {
		got := contract.MatchName(pattern, name)
		if !contract.IsNamePattern(pattern) && got != (pattern == name) {
			t.Fatalf("MatchName(%q, %q) = %v for an exact name", pattern, name, got)
		}
		if contract.ValidateNamePattern(pattern) != nil || fill == "" || strings.ContainsAny(fill, "-.") {
			return
		}
		if member := strings.ReplaceAll(pattern, "*", fill); !contract.MatchName(pattern, member) {
			t.Fatalf("MatchName(%q, %q) = false: each '*' filled with %q", pattern, member, fill)
		}
	})
}

// TestNameMatchedBy: the name NameMatchedBy makes of a valid pattern is one the pattern
// matches.
func TestNameMatchedBy(t *testing.T) {
	for _, p := range []string{"v4-0-config-user-idp-*-file-data", "idp-*-ca", "a-*-b-*", "cluster"} {
		if name := contract.NameMatchedBy(p); !contract.MatchName(p, name) {
			t.Errorf("NameMatchedBy(%q) = %q, which it does not match", p, name)
		}
	}
}
