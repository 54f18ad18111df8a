package namespaces

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// FuzzEncodeName maps a standalone object (ns, name) of kind testKinds[kindIndex&0x7f %
// len(testKinds)] to the management cluster and back. When the high bit of kindIndex is set,
// name is a generateName instead, and the object the server would name from it is mapped
// back too. Inputs that are not valid (ns not a DNS label, name not valid for the kind) are
// skipped; the namespace of a cluster-scoped kind is ignored.
func FuzzEncodeName(f *testing.F) {
	f.Add("openshift-authentication", "audit", uint8(0))
	f.Add("team--a", "cfg", uint8(0))
	f.Add("openshift-monitoring", strings.Repeat("web", 20), uint8(2))
	f.Add("", "system:openshift:oauth-servercert-trust", uint8(7))
	f.Add("openshift-config", strings.Repeat("é:", 80), uint8(5))
	f.Add("", "cluster", uint8(9))
	f.Add("openshift-authentication", "v4-0-config-system-serving-cert", uint8(1))
	f.Add("openshift-kube-apiserver-operator", "kube-apiserver-operator-", uint8(0x80))
	h := testHosted()
	f.Fuzz(func(t *testing.T, ns, name string, kindIndex uint8) {
		k := testKinds[int(kindIndex&0x7f)%len(testKinds)]
		generate := kindIndex&0x80 != 0
		if k.clusterScoped {
			ns = ""
		} else if len(validation.IsDNS1123Label(ns)) > 0 {
			t.Skip()
		}
		r := rulesFor(k.group, k.resource)
		src := contract.Identity{Group: k.group, Version: "v1", Resource: k.resource, Namespace: ns}
		if generate {
			if name == "" || !r.validPrefix(name) || len(name) > generatedNameMax-generatedSuffixLen {
				t.Skip()
			}
			src.GenerateName = name
		} else {
			if len(r.validate(name)) > 0 {
				t.Skip()
			}
			src.Name = name
		}

		tgt, err := h.ToTarget(routing.ClusterManagement, src)
		if err != nil {
			t.Fatalf("ToTarget(%#v): %v", src, err)
		}
		checkTargetValid(t, tgt)
		encoded := tgt.Name + tgt.GenerateName
		_, shadow := IsShadowGroup(tgt.Group)
		_, aliased := h.aliasOf(src)
		hashed := !shadow && !aliased && !strings.Contains(encoded, separator)
		if hashed && !isHashedShape(encoded) {
			t.Fatalf("ToTarget(%#v) = %#v: neither readable nor hashed", src, tgt)
		}

		back, err := h.ToSource(routing.ClusterManagement, tgt, SourceAnnotations(src))
		if err != nil || back != src {
			t.Fatalf("ToSource(%#v, annotations) = %#v, %v; want %#v", tgt, back, err, src)
		}
		back, err = h.ToSource(routing.ClusterManagement, tgt, nil)
		if hashed {
			if !errors.Is(err, ErrNeedsAnnotations) {
				t.Fatalf("ToSource(%#v, nil) = %#v, %v; want ErrNeedsAnnotations", tgt, back, err)
			}
		} else if err != nil || back != src {
			t.Fatalf("ToSource(%#v, nil) = %#v, %v; want %#v", tgt, back, err, src)
		}

		if !generate {
			return
		}
		// The object the server names from the request: its suffix follows to the standalone
		// name, unless the prefix is hashed.
		const suffix = "x7k2p"
		obj := tgt
		obj.Name, obj.GenerateName = tgt.GenerateName+suffix, ""
		want := src
		want.Name, want.GenerateName = src.GenerateName+suffix, ""
		back, err = h.ToSource(routing.ClusterManagement, obj, SourceAnnotations(src))
		switch {
		case hashed && err == nil:
			t.Fatalf("ToSource(%#v, annotations) = %#v; want an error for a hashed generateName", obj, back)
		case !hashed && (err != nil || back != want):
			t.Fatalf("ToSource(%#v, annotations) = %#v, %v; want %#v", obj, back, err, want)
		}
	})
}
