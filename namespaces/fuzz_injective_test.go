package namespaces

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// FuzzEncodeNameInjective maps two standalone objects to the management cluster and checks
// that different objects never share a target, and that each target maps back to its own
// source. The first object is (ns1, name1) of kind testKinds[kinds&0x0f], the second (ns2,
// name2) of kind testKinds[kinds>>4]; beside the second object, every other way of splitting
// the readable form ns1 + "--" + name1 at a "--" is tried against the first, since that is
// where a readable encoding would be ambiguous. Invalid objects are skipped.
func FuzzEncodeNameInjective(f *testing.F) {
	f.Add("a--b", "c", "a", "b--c", uint8(0x00))
	f.Add("a", "b--c", "a-b", "-c", uint8(0x00))
	f.Add("team", "x", "team", "x", uint8(0x10))
	f.Add("openshift-config", "system:openshift:a", "", "openshift-config--system:openshift:a", uint8(0x75))
	f.Add("", "system:openshift:a--b", "", "system:openshift:a", uint8(0x77))
	f.Add("openshift-monitoring", strings.Repeat("web", 20), "openshift-monitoring", strings.Repeat("web", 20)+"x", uint8(0x22))
	f.Add("a", strings.Repeat("b", 250), "a-b", strings.Repeat("b", 249), uint8(0x00))
	f.Add("openshift-authentication", "v4-0-config-system-serving-cert", "clusters-example", "oauth-server-crt", uint8(0x11))
	h := testHosted()
	f.Fuzz(func(t *testing.T, ns1, name1, ns2, name2 string, kinds uint8) {
		a, ok := fuzzIdentity(testKinds[int(kinds&0x0f)%len(testKinds)], ns1, name1)
		if !ok {
			return
		}
		ta := mustTarget(t, h, a)
		others := []contract.Identity{}
		if b, ok := fuzzIdentity(testKinds[int(kinds>>4)%len(testKinds)], ns2, name2); ok {
			others = append(others, b)
		}
		joined := a.Namespace + separator + a.Name
		for i := 0; i+len(separator) <= len(joined); i++ {
			if joined[i:i+len(separator)] != separator {
				continue
			}
			k := testKinds[int(kinds&0x0f)%len(testKinds)]
			if b, ok := fuzzIdentity(k, joined[:i], joined[i+len(separator):]); ok {
				others = append(others, b)
			}
		}
		for _, b := range others {
			tb := mustTarget(t, h, b)
			if a != b && ta == tb {
				t.Fatalf("%#v and %#v share the target %#v", a, b, ta)
			}
			if a == b && ta != tb {
				t.Fatalf("%#v maps to %#v and %#v", a, ta, tb)
			}
		}
	})
}

// fuzzIdentity returns the standalone object (ns, name) of kind k, and whether it is valid:
// ns a DNS label (ignored for cluster-scoped kinds), name valid for the kind.
func fuzzIdentity(k testKind, ns, name string) (contract.Identity, bool) {
	if k.clusterScoped {
		ns = ""
	} else if len(validation.IsDNS1123Label(ns)) > 0 {
		return contract.Identity{}, false
	}
	if len(rulesFor(k.group, k.resource).validate(name)) > 0 {
		return contract.Identity{}, false
	}
	return contract.Identity{Group: k.group, Version: "v1", Resource: k.resource, Namespace: ns, Name: name}, true
}

// mustTarget maps src to the management cluster, checks the target is valid and maps back to
// src with its annotations, and returns it.
func mustTarget(t *testing.T, h Hosted, src contract.Identity) contract.Identity {
	t.Helper()
	tgt, err := h.ToTarget(routing.ClusterManagement, src)
	if err != nil {
		t.Fatalf("ToTarget(%#v): %v", src, err)
	}
	checkTargetValid(t, tgt)
	if back, err := h.ToSource(routing.ClusterManagement, tgt, SourceAnnotations(src)); err != nil || back != src {
		t.Fatalf("ToSource(%#v, annotations) = %#v, %v; want %#v", tgt, back, err, src)
	}
	return tgt
}
