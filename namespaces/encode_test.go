package namespaces

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestNameValidator(t *testing.T) {
	long := strings.Repeat("a", 253)
	cases := map[string]struct {
		group, resource, name string
		valid                 bool
	}{
		"service label":                   {"", "services", "my-svc", true},
		"service with a dot":              {"", "services", "my.svc", false},
		"service of 64 characters":        {"", "services", strings.Repeat("a", 64), false},
		"namespace label":                 {"", "namespaces", "openshift-config", true},
		"configmap subdomain":             {"", "configmaps", "a.b-c", true},
		"configmap of 253 characters":     {"", "configmaps", long, true},
		"configmap of 254 characters":     {"", "configmaps", long + "a", false},
		"configmap with a colon":          {"", "configmaps", "a:b", false},
		"deployment upper-case":           {"apps", "deployments", "A", false},
		"clusterrole with colons":         {groupRBAC, "clusterroles", "system:openshift:oauth-servercert-trust", true},
		"rolebinding with upper-case":     {groupRBAC, "rolebindings", "Admin_Binding", true},
		"role with a slash":               {groupRBAC, "roles", "a/b", false},
		"role with a percent":             {groupRBAC, "roles", "a%b", false},
		"role named dot-dot":              {groupRBAC, "roles", "..", false},
		"role empty":                      {groupRBAC, "roles", "", false},
		"clusterrolebinding of 254":       {groupRBAC, "clusterrolebindings", long + "a", false},
		"roles of another group":          {"authorization.openshift.io", "roles", "a:b", false},
		"shadow of a cluster-scoped kind": {ShadowGroup("config.openshift.io"), "clusteroperators", "authentication", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			msgs := NameValidator(tc.group, tc.resource)(tc.name)
			if got := len(msgs) == 0; got != tc.valid {
				t.Errorf("NameValidator(%q, %q)(%q) = %v, want valid %v", tc.group, tc.resource, tc.name, msgs, tc.valid)
			}
		})
	}
}

func TestSanitize(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"empty":                {"", ""},
		"clean":                {"abc-123", "abc-123"},
		"upper-case":           {"ABC", "abc"},
		"runs of dashes":       {"a--b---c", "a-b-c"},
		"leading and trailing": {"--a-", "a"},
		"colons and dots":      {"system:openshift:a.b", "system-openshift-a-b"},
		"only punctuation":     {":::", ""},
		"multi-byte":           {"aéb", "a-b"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := sanitize(tc.in); got != tc.want {
				t.Errorf("sanitize(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestEncodeName(t *testing.T) {
	cases := map[string]struct {
		rules    nameRules
		ns, name string
		prefix   bool
		want     string
	}{
		"readable": {
			rules: subdomainRules, ns: "ns", name: "a", want: "ns--a",
		},
		"readable with an empty namespace": {
			rules: rbacRules, ns: "", name: "system:a", want: "--system:a",
		},
		"readable rbac name starting with a dash": {
			rules: rbacRules, ns: "ns", name: "-a", want: "ns---a",
		},
		"readable label of exactly 63": {
			rules: labelRules, ns: "ns", name: strings.Repeat("s", 59), want: "ns--" + strings.Repeat("s", 59),
		},
		"label of 64 is hashed": {
			rules: labelRules, ns: "ns", name: strings.Repeat("s", 60),
			want: "ns-" + strings.Repeat("s", 43) + "-" + hashOf("ns/"+strings.Repeat("s", 60)),
		},
		"truncation that ends in a dash": {
			// The cut falls right after "x-": the dash is trimmed.
			rules: labelRules, ns: "x--" + strings.Repeat("y", 43), name: "zz",
			want: "x-" + strings.Repeat("y", 43) + "-" + hashOf("x--"+strings.Repeat("y", 43)+"/zz"),
		},
		"readable rbac name containing --": {
			rules: rbacRules, ns: "", name: ":::--:::", want: "--:::--:::",
		},
		"empty name, hashed": {
			rules: labelRules, ns: "a--b", name: "",
			want: "a-b-" + hashOf("a--b/"),
		},
		"only punctuation, hashed": {
			rules: subdomainRules, ns: "a--b", name: "...",
			want: "a-b-" + hashOf("a--b/..."),
		},
		"generateName of exactly 58": {
			rules: subdomainRules, ns: "ns", name: strings.Repeat("g", 54), prefix: true,
			want: "ns--" + strings.Repeat("g", 54),
		},
		"generateName of 59 is hashed": {
			rules: subdomainRules, ns: "ns", name: strings.Repeat("g", 55), prefix: true,
			want: "ns-" + strings.Repeat("g", 38) + "-" + hashOf("ns/"+strings.Repeat("g", 55)),
		},
		"generateName ending in a dash stays readable": {
			rules: labelRules, ns: "ns", name: "gen-", prefix: true, want: "ns--gen-",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := encodeName(tc.rules, tc.ns, tc.name, tc.prefix)
			if got != tc.want {
				t.Fatalf("encodeName(%q, %q) =\n %q, want\n %q", tc.ns, tc.name, got, tc.want)
			}
			if !tc.rules.valid(got, tc.prefix) {
				t.Errorf("%q is not valid for the kind", got)
			}
			ns, n, err := decodeName(tc.rules, got, tc.prefix)
			if !strings.Contains(got, separator) {
				if !isHashedShape(got) || !errors.Is(err, ErrNeedsAnnotations) {
					t.Errorf("hashed %q: shape %v, decode error %v", got, isHashedShape(got), err)
				}
				return
			}
			if err != nil || ns != tc.ns || n != tc.name {
				t.Errorf("decodeName(%q) = %q, %q, %v", got, ns, n, err)
			}
		})
	}
}

// hashOf is the hash part of a hashed name, computed independently of hashedName.
func hashOf(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])[:16]
}

func TestHashedNameNeverHasDoubleDash(t *testing.T) {
	for _, limit := range []int{16, 17, 18, 19, 20, 40, 58, 63, 253} {
		for _, ns := range []string{"", "a", "a--b", "a-", "-"} {
			for _, name := range []string{"", "-", "--", "a-b", "a" + strings.Repeat("-b", 200), strings.Repeat("x-", 150)} {
				got := hashedName(ns, name, limit)
				if strings.Contains(got, separator) || len(got) > limit || !isHashedShape(got) {
					t.Errorf("hashedName(%q, %q, %d) = %q", ns, name, limit, got)
				}
			}
		}
	}
}

func TestIsHashedShape(t *testing.T) {
	cases := map[string]bool{
		"0123456789abcdef":     true,
		"a-0123456789abcdef":   true,
		"a0123456789abcdef":    false,
		"a-0123456789abcdeF":   false,
		"a-0123456789abcdeg":   false,
		"123456789abcdef":      false,
		"oauth-server-crt":     false,
		"x-y-0000000000000000": true,
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			if got := isHashedShape(in); got != want {
				t.Errorf("isHashedShape(%q) = %v, want %v", in, got, want)
			}
		})
	}
}
