package namespaces

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// testKind is one kind the property test and the fuzz target map.
type testKind struct {
	group, resource string
	clusterScoped   bool
}

var testKinds = []testKind{
	{"", "configmaps", false},
	{"", "secrets", false},
	{"", "services", false},
	{"apps", "deployments", false},
	{"", "serviceaccounts", false},
	{groupRBAC, "roles", false},
	{groupRBAC, "rolebindings", false},
	{groupRBAC, "clusterroles", true},
	{groupRBAC, "clusterrolebindings", true},
	{"operator.openshift.io", "authentications", true},
	{"config.openshift.io", "clusteroperators", true},
}

// Small pools make the generator repeat namespaces and names across kinds, so that the
// injectivity check meets near misses rather than only distinct strings.
var (
	namespacePool = []string{"openshift-authentication", "openshift-config", "a", "a-b", "a--b", "ab", "b--a", "x--y", "default"}
	namePool      = []string{"a", "cluster", "audit", "a--b", "b", "-b", "--", "system:openshift:foo", "a-0123456789abcdef"}
)

// gen generates random valid identities.
type gen struct{ r *rand.Rand }

// length returns a length in [1, max], skewed to short ones, with max itself and lengths near
// it often enough to exercise truncation.
func (g gen) length(max int) int {
	switch g.r.IntN(10) {
	case 0:
		return max
	case 1, 2:
		return max - g.r.IntN(min(max, 10))
	default:
		return 1 + g.r.IntN(min(max, 24))
	}
}

const (
	alnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	// rbacChars has what RBAC names may hold beyond alphanumerics; é is two bytes.
	rbacChars = alnum + "ABCXYZ:-._@+~=é"
)

// label returns a DNS-1123 label of length n, with "--" inside it now and then.
func (g gen) label(n int) string {
	b := make([]byte, n)
	for i := range b {
		if i > 0 && i < n-1 && g.r.IntN(6) == 0 {
			b[i] = '-'
		} else {
			b[i] = alnum[g.r.IntN(len(alnum))]
		}
	}
	if n >= 4 && g.r.IntN(5) == 0 {
		i := 1 + g.r.IntN(n-3)
		b[i], b[i+1] = '-', '-'
	}
	return string(b)
}

// subdomain returns a DNS-1123 subdomain of length n.
func (g gen) subdomain(n int) string {
	b := make([]byte, n)
	for i := range b {
		prev := byte('a')
		if i > 0 {
			prev = b[i-1]
		}
		c := alnum[g.r.IntN(len(alnum))]
		if i > 0 && i < n-1 && prev != '.' {
			switch g.r.IntN(10) {
			case 0:
				c = '-'
			case 1:
				if prev != '-' {
					c = '.'
				}
			}
		}
		b[i] = c
	}
	return string(b)
}

// rbacName returns a path-segment name of at most n bytes.
func (g gen) rbacName(n int) string {
	var b strings.Builder
	if g.r.IntN(3) == 0 {
		b.WriteString("system:openshift:")
	}
	for b.Len() < n {
		c := string(rbacChars[g.r.IntN(len(rbacChars))])
		if c[0] >= 0x80 {
			c = "é"
			if b.Len()+len(c) > n {
				c = "x"
			}
		}
		b.WriteString(c)
	}
	s := b.String()
	if len(s) > n {
		s = s[:n] // "system:openshift:" is ASCII: a cut there is safe
	}
	if s == "." || s == ".." {
		s = "dot"
	}
	return s
}

func (g gen) namespace() string {
	if g.r.IntN(4) == 0 {
		return namespacePool[g.r.IntN(len(namespacePool))]
	}
	return g.label(g.length(validation.DNS1123LabelMaxLength))
}

// name returns a name valid for k.
func (g gen) name(k testKind) string {
	if g.r.IntN(8) == 0 {
		if n := namePool[g.r.IntN(len(namePool))]; len(NameValidator(k.group, k.resource)(n)) == 0 {
			return n
		}
	}
	switch rulesFor(k.group, k.resource).max {
	case validation.DNS1123LabelMaxLength: // services
		if g.r.IntN(3) == 0 {
			return g.label(55 + g.r.IntN(9))
		}
		return g.label(g.length(validation.DNS1123LabelMaxLength))
	}
	if k.group == groupRBAC {
		return g.rbacName(g.length(validation.DNS1123SubdomainMaxLength))
	}
	return g.subdomain(g.length(validation.DNS1123SubdomainMaxLength))
}

// identity returns a random source identity: mostly names, some generateNames, rarely an
// aliased object.
func (g gen) identity(h Hosted) contract.Identity {
	if g.r.IntN(100) == 0 {
		a := h.Aliases[g.r.IntN(len(h.Aliases))].Source
		a.Version = "v1"
		return a
	}
	k := testKinds[g.r.IntN(len(testKinds))]
	src := contract.Identity{Group: k.group, Version: "v1", Resource: k.resource}
	if !k.clusterScoped {
		src.Namespace = g.namespace()
	}
	if g.r.IntN(20) == 0 {
		p := g.name(k)
		if len(p) > 40 {
			p = strings.TrimRight(p[:40], ".")
		}
		if g.r.IntN(2) == 0 {
			p += "-"
		}
		src.GenerateName = p
	} else {
		src.Name = g.name(k)
	}
	return src
}

// TestHostedProperties maps 100,000 random identities and checks that every target is valid,
// that no two sources share a target, and that ToSource inverts ToTarget: always with the
// annotations, and without them for every target that is not hashed.
func TestHostedProperties(t *testing.T) {
	const n = 100_000
	h := Hosted{Namespace: hcp, Aliases: []Alias{
		testAlias,
		{Source: contract.Identity{Group: "apps", Resource: "deployments", Namespace: "openshift-authentication", Name: "oauth-openshift"}, Name: "oauth-openshift"},
	}}
	if err := h.Validate(); err != nil {
		t.Fatal(err)
	}
	g := gen{rand.New(rand.NewPCG(20250805, 1))}
	seen := make(map[contract.Identity]contract.Identity, n)
	counts := map[string]int{}
	start := time.Now()
	for range n {
		src := g.identity(h)
		if err := contract.ValidateIdentity(src); err != nil {
			t.Fatalf("generator produced an invalid identity %#v: %v", src, err)
		}
		if src.Name != "" {
			if msgs := NameValidator(src.Group, src.Resource)(src.Name); len(msgs) > 0 {
				t.Fatalf("generator produced an invalid name %#v: %v", src, msgs)
			}
		}
		tgt, err := h.ToTarget(routing.ClusterManagement, src)
		if err != nil {
			t.Fatalf("ToTarget(%#v): %v", src, err)
		}
		if tgt.Namespace != hcp {
			t.Fatalf("ToTarget(%#v) = %#v: not in %s", src, tgt, hcp)
		}
		checkTargetValid(t, tgt)
		if prev, ok := seen[tgt]; ok && prev != src {
			t.Fatalf("%#v and %#v share the target %#v", prev, src, tgt)
		}
		seen[tgt] = src

		back, err := h.ToSource(routing.ClusterManagement, tgt, SourceAnnotations(src))
		if err != nil || back != src {
			t.Fatalf("ToSource(%#v, annotations) = %#v, %v; want %#v", tgt, back, err, src)
		}

		_, shadow := IsShadowGroup(tgt.Group)
		_, aliased := h.aliasOf(src)
		readable := strings.Contains(tgt.Name+tgt.GenerateName, separator)
		form := "hashed"
		switch {
		case aliased:
			form = "alias"
		case shadow:
			form = "shadow"
		case readable:
			form = "readable"
		}
		counts[form]++
		back, err = h.ToSource(routing.ClusterManagement, tgt, nil)
		if form == "hashed" {
			if !errors.Is(err, ErrNeedsAnnotations) {
				t.Fatalf("ToSource(%#v, nil) = %#v, %v; want ErrNeedsAnnotations", tgt, back, err)
			}
			continue
		}
		if err != nil || back != src {
			t.Fatalf("ToSource(%#v, nil) = %#v, %v; want %#v", tgt, back, err, src)
		}
	}
	t.Logf("%d identities, %d distinct, in %v: %v", n, len(seen), time.Since(start), counts)
}
