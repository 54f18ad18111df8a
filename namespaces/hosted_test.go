package namespaces

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

const hcp = "clusters-example"

var testAlias = Alias{
	Source: contract.Identity{Resource: "secrets", Namespace: "openshift-authentication", Name: "v4-0-config-system-serving-cert"},
	Name:   "oauth-server-crt",
}

func testHosted() Hosted { return Hosted{Namespace: hcp, Aliases: []Alias{testAlias}} }

// id builds an identity; version is always v1.
func id(group, resource, ns, name string) contract.Identity {
	return contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: ns, Name: name}
}

func genID(group, resource, ns, generateName string) contract.Identity {
	return contract.Identity{Group: group, Version: "v1", Resource: resource, Namespace: ns, GenerateName: generateName}
}

func TestHostedToTarget(t *testing.T) {
	long := strings.Repeat("a", 253)
	svc60 := strings.Repeat("web", 20)
	cases := map[string]struct {
		cluster string
		src     contract.Identity
		want    contract.Identity
		// hashed: the target cannot be inverted without annotations.
		hashed bool
	}{
		"configmap, readable": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "openshift-authentication", "audit"),
			want:    id("", "configmaps", hcp, "openshift-authentication--audit"),
		},
		"name containing --, readable": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "openshift-authentication", "a--b"),
			want:    id("", "configmaps", hcp, "openshift-authentication--a--b"),
		},
		"namespaced role with colons, readable": {
			cluster: routing.ClusterManagement,
			src:     id(groupRBAC, "roles", "openshift-config", "system:openshift:foo"),
			want:    id(groupRBAC, "roles", hcp, "openshift-config--system:openshift:foo"),
		},
		"clusterrole becomes a role": {
			cluster: routing.ClusterManagement,
			src:     id(groupRBAC, "clusterroles", "", "system:openshift:foo"),
			want:    id(groupRBAC, "roles", hcp, "--system:openshift:foo"),
		},
		"clusterrolebinding becomes a rolebinding": {
			cluster: routing.ClusterManagement,
			src:     id(groupRBAC, "clusterrolebindings", "", "system:openshift:oauth-servercert-trust"),
			want:    id(groupRBAC, "rolebindings", hcp, "--system:openshift:oauth-servercert-trust"),
		},
		"cluster-scoped operator CR becomes a shadow": {
			cluster: routing.ClusterManagement,
			src:     id("operator.openshift.io", "authentications", "", "cluster"),
			want:    id("operator.openshift.io.shadow.topolayer.dev", "authentications", hcp, "cluster"),
		},
		"cluster-scoped core kind becomes a core shadow": {
			cluster: routing.ClusterManagement,
			src:     id("", "persistentvolumes", "", "pv-1"),
			want:    id("core.shadow.topolayer.dev", "persistentvolumes", hcp, "pv-1"),
		},
		"namespace is absorbed": {
			cluster: routing.ClusterManagement,
			src:     id("", "namespaces", "", "openshift-authentication"),
			want:    id("", "namespaces", "", hcp),
			hashed:  true,
		},
		"namespace with --, hashed": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "team--a", "cfg"),
			want:    id("", "configmaps", hcp, "team-a-cfg-a791ecf49bf1bca2"),
			hashed:  true,
		},
		"253-character configmap name, hashed": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "openshift-authentication", long),
			want:    id("", "configmaps", hcp, "openshift-authentication-"+strings.Repeat("a", 211)+"-f08941d4f79b986f"),
			hashed:  true,
		},
		"60-character service name in a 20-character namespace, hashed label": {
			cluster: routing.ClusterManagement,
			src:     id("", "services", "openshift-monitoring", svc60),
			want:    id("", "services", hcp, "openshift-monitoring-webwebwebwebwebwebwebwebw-5d4845aceae5f8d4"),
			hashed:  true,
		},
		"generateName, readable": {
			cluster: routing.ClusterManagement,
			src:     genID("", "configmaps", "openshift-kube-apiserver", "revision-"),
			want:    genID("", "configmaps", hcp, "openshift-kube-apiserver--revision-"),
		},
		"generateName longer than 58 once encoded, hashed": {
			cluster: routing.ClusterManagement,
			src:     genID("", "configmaps", "openshift-kube-apiserver-operator", "kube-apiserver-operator-"),
			want:    genID("", "configmaps", hcp, "openshift-kube-apiserver-operator-kube-ap-1e572b113a1bf1d3"),
			hashed:  true,
		},
		"generateName in a namespace with --, hashed": {
			cluster: routing.ClusterManagement,
			src:     genID("", "configmaps", "team--a", "revision-"),
			want:    genID("", "configmaps", hcp, "team-a-revision-324aede34c07c937"),
			hashed:  true,
		},
		"generateName of a clusterrole": {
			cluster: routing.ClusterManagement,
			src:     genID(groupRBAC, "clusterroles", "", "system:gen-"),
			want:    genID(groupRBAC, "roles", hcp, "--system:gen-"),
		},
		"generateName of a shadow": {
			cluster: routing.ClusterManagement,
			src:     genID("config.openshift.io", "clusteroperators", "", "op-"),
			want:    genID("config.openshift.io.shadow.topolayer.dev", "clusteroperators", hcp, "op-"),
		},
		"alias": {
			cluster: routing.ClusterManagement,
			src:     id("", "secrets", "openshift-authentication", "v4-0-config-system-serving-cert"),
			want:    id("", "secrets", hcp, "oauth-server-crt"),
		},
		"same name as an alias, another kind": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "openshift-authentication", "v4-0-config-system-serving-cert"),
			want:    id("", "configmaps", hcp, "openshift-authentication--v4-0-config-system-serving-cert"),
		},
		"guest keeps the identity": {
			cluster: routing.ClusterGuest,
			src:     id("", "configmaps", "openshift-authentication", "audit"),
			want:    id("", "configmaps", "openshift-authentication", "audit"),
		},
		"guest keeps a cluster-scoped identity": {
			cluster: routing.ClusterGuest,
			src:     id(groupRBAC, "clusterroles", "", "system:openshift:foo"),
			want:    id(groupRBAC, "clusterroles", "", "system:openshift:foo"),
		},
	}
	h := testHosted()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := h.ToTarget(tc.cluster, tc.src)
			if err != nil {
				t.Fatalf("ToTarget: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("ToTarget (-want +got):\n%s", diff)
			}
			checkTargetValid(t, got)

			back, err := h.ToSource(tc.cluster, got, SourceAnnotations(tc.src))
			if err != nil {
				t.Fatalf("ToSource with annotations: %v", err)
			}
			if diff := cmp.Diff(tc.src, back); diff != "" {
				t.Errorf("ToSource with annotations (-want +got):\n%s", diff)
			}

			back, err = h.ToSource(tc.cluster, got, nil)
			switch {
			case tc.hashed:
				if !errors.Is(err, ErrNeedsAnnotations) {
					t.Errorf("ToSource without annotations: got %v, %v; want ErrNeedsAnnotations", back, err)
				}
			case err != nil:
				t.Errorf("ToSource without annotations: %v", err)
			default:
				if diff := cmp.Diff(tc.src, back); diff != "" {
					t.Errorf("ToSource without annotations (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// checkTargetValid checks the target's name and generateName against its kind's rules.
func checkTargetValid(t *testing.T, target contract.Identity) {
	t.Helper()
	r := rulesFor(target.Group, target.Resource)
	if target.Name != "" {
		if msgs := NameValidator(target.Group, target.Resource)(target.Name); len(msgs) > 0 {
			t.Errorf("target name %q is not valid for %s: %v", target.Name, target.GroupResource(), msgs)
		}
	}
	if target.GenerateName != "" {
		// A shadow keeps its generateName; every other generateName is encoded short enough
		// that the server does not truncate it.
		_, shadow := IsShadowGroup(target.Group)
		if !r.validPrefix(target.GenerateName) || !shadow && len(target.GenerateName) > r.limit(true) {
			t.Errorf("target generateName %q is not valid for %s", target.GenerateName, target.GroupResource())
		}
	}
}

func TestHostedToTargetErrors(t *testing.T) {
	cases := map[string]struct {
		noNamespace bool // map with Hosted{} instead of testHosted()
		cluster     string
		src         contract.Identity
		want        string
	}{
		"unknown cluster": {
			cluster: "elsewhere",
			src:     id("", "configmaps", "a", "b"),
			want:    `configmaps a/b: unknown cluster "elsewhere" (want "management" or "guest")`,
		},
		"no namespace configured": {
			noNamespace: true,
			cluster:     routing.ClusterManagement,
			src:         id("", "configmaps", "a", "b"),
			want:        "configmaps a/b: the hosted control plane namespace is not set",
		},
		"no name": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "a", ""),
			want:    "configmaps a/*: name or generateName is required",
		},
		"namespace not a label": {
			cluster: routing.ClusterManagement,
			src:     id("", "configmaps", "Not_A_Label", "b"),
			want:    `configmaps Not_A_Label/b: namespace "Not_A_Label": a lowercase RFC 1123 label must consist of`,
		},
		"cluster-scoped name not valid for a namespaced shadow": {
			cluster: routing.ClusterManagement,
			src:     id("user.openshift.io", "users", "", "kube:admin"),
			want:    `users.user.openshift.io kube:admin: name "kube:admin" is not valid for the namespaced shadow kind: a lowercase RFC 1123 subdomain`,
		},
		"core spelled core": {
			cluster: routing.ClusterManagement,
			src:     id("core", "persistentvolumes", "", "pv"),
			want:    `persistentvolumes.core pv: group "core": the core group is spelled ""`,
		},
		"shadow group as a source": {
			cluster: routing.ClusterManagement,
			src:     id("operator.openshift.io.shadow.topolayer.dev", "authentications", "", "cluster"),
			want:    `authentications.operator.openshift.io.shadow.topolayer.dev cluster: group "operator.openshift.io.shadow.topolayer.dev": a shadow group is not a standalone group`,
		},
		"clusterrole with a namespace": {
			cluster: routing.ClusterManagement,
			src:     id(groupRBAC, "clusterroles", "ns", "r"),
			want:    `clusterroles.rbac.authorization.k8s.io ns/r: clusterroles is cluster-scoped but has namespace "ns"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := testHosted()
			if tc.noNamespace {
				h = Hosted{}
			}
			got, err := h.ToTarget(tc.cluster, tc.src)
			if err == nil {
				t.Fatalf("ToTarget = %v, want an error", got)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("error:\n got %s\nwant %s...", err, tc.want)
			}
		})
	}
}

func TestHostedToSource(t *testing.T) {
	cm := id("", "configmaps", "openshift-authentication", "audit")
	tampered := SourceAnnotations(cm)
	tampered[AnnotationStandaloneName] = "other"
	partial := SourceAnnotations(cm)
	delete(partial, AnnotationStandaloneNamespace)
	nsAnn := SourceAnnotations(id("", "namespaces", "", "openshift-authentication"))
	genAnn := SourceAnnotations(genID("", "configmaps", "openshift-kube-apiserver", "revision-"))
	hashedGenAnn := SourceAnnotations(genID("", "configmaps", "team--a", "revision-"))

	cases := map[string]struct {
		cluster     string
		target      contract.Identity
		annotations map[string]string
		want        contract.Identity
		wantErr     error  // checked with errors.Is when set
		wantMsg     string // error prefix when set
	}{
		"readable name": {
			cluster: routing.ClusterManagement,
			target:  id("", "configmaps", hcp, "openshift-authentication--audit"),
			want:    cm,
		},
		"version comes from the target": {
			cluster: routing.ClusterManagement,
			target:  contract.Identity{Group: "apps", Version: "v1beta2", Resource: "deployments", Namespace: hcp, Name: "ns--d"},
			want:    contract.Identity{Group: "apps", Version: "v1beta2", Resource: "deployments", Namespace: "ns", Name: "d"},
		},
		"role with an empty namespace part is a clusterrole": {
			cluster: routing.ClusterManagement,
			target:  id(groupRBAC, "roles", hcp, "--system:openshift:foo"),
			want:    id(groupRBAC, "clusterroles", "", "system:openshift:foo"),
		},
		"rolebinding with an empty namespace part is a clusterrolebinding": {
			cluster: routing.ClusterManagement,
			target:  id(groupRBAC, "rolebindings", hcp, "--b"),
			want:    id(groupRBAC, "clusterrolebindings", "", "b"),
		},
		"shadow": {
			cluster: routing.ClusterManagement,
			target:  id("config.openshift.io.shadow.topolayer.dev", "clusteroperators", hcp, "authentication"),
			want:    id("config.openshift.io", "clusteroperators", "", "authentication"),
		},
		"alias": {
			cluster: routing.ClusterManagement,
			target:  id("", "secrets", hcp, "oauth-server-crt"),
			want:    id("", "secrets", "openshift-authentication", "v4-0-config-system-serving-cert"),
		},
		"object named from a readable generateName": {
			cluster: routing.ClusterManagement,
			target:  id("", "configmaps", hcp, "openshift-kube-apiserver--revision-x7k2p"),
			want:    id("", "configmaps", "openshift-kube-apiserver", "revision-x7k2p"),
		},
		"object named from a readable generateName, with annotations": {
			cluster:     routing.ClusterManagement,
			target:      id("", "configmaps", hcp, "openshift-kube-apiserver--revision-x7k2p"),
			annotations: genAnn,
			want:        id("", "configmaps", "openshift-kube-apiserver", "revision-x7k2p"),
		},
		"object named from a readable generateName, with its generateName": {
			cluster: routing.ClusterManagement,
			target: contract.Identity{Version: "v1", Resource: "configmaps", Namespace: hcp,
				Name: "openshift-kube-apiserver--revision-x7k2p", GenerateName: "openshift-kube-apiserver--revision-"},
			annotations: genAnn,
			want: contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-kube-apiserver",
				Name: "revision-x7k2p", GenerateName: "revision-"},
		},
		"absorbed namespace with annotations": {
			cluster:     routing.ClusterManagement,
			target:      id("", "namespaces", "", hcp),
			annotations: nsAnn,
			want:        id("", "namespaces", "", "openshift-authentication"),
		},
		"guest ignores annotations": {
			cluster:     routing.ClusterGuest,
			target:      cm,
			annotations: tampered,
			want:        cm,
		},

		"hashed name without annotations": {
			cluster: routing.ClusterManagement,
			target:  id("", "configmaps", hcp, "team-a-cfg-a791ecf49bf1bca2"),
			wantErr: ErrNeedsAnnotations,
			wantMsg: `configmaps clusters-example/team-a-cfg-a791ecf49bf1bca2: name "team-a-cfg-a791ecf49bf1bca2" is in the hashed form: cannot be inverted`,
		},
		"absorbed namespace without annotations": {
			cluster: routing.ClusterManagement,
			target:  id("", "namespaces", "", hcp),
			wantErr: ErrNeedsAnnotations,
			wantMsg: "namespaces clusters-example: the hosted control plane namespace absorbs every standalone namespace",
		},
		"annotations that do not map to the object": {
			cluster:     routing.ClusterManagement,
			target:      id("", "configmaps", hcp, "openshift-authentication--audit"),
			annotations: tampered,
			wantErr:     ErrIdentityMismatch,
			wantMsg:     "configmaps clusters-example/openshift-authentication--audit: annotations name configmaps openshift-authentication/other, which maps to configmaps clusters-example/openshift-authentication--other",
		},
		"annotations of an aliased object on the encoded name": {
			cluster:     routing.ClusterManagement,
			target:      id("", "secrets", hcp, "openshift-authentication--v4-0-config-system-serving-cert"),
			annotations: SourceAnnotations(testAlias.Source),
			wantErr:     ErrIdentityMismatch,
		},
		"incomplete annotations": {
			cluster:     routing.ClusterManagement,
			target:      id("", "configmaps", hcp, "openshift-authentication--audit"),
			annotations: partial,
			wantMsg:     "configmaps clusters-example/openshift-authentication--audit: standalone identity annotations are incomplete: topolayer.dev/standalone-namespace missing",
		},
		"looks readable but is not an encoding": {
			cluster: routing.ClusterManagement,
			target:  id("", "configmaps", hcp, "Foo--bar"),
			wantMsg: `configmaps clusters-example/Foo--bar: name "Foo--bar": not a name topolayer encodes`,
		},
		"readable form with an invalid namespace part": {
			cluster: routing.ClusterManagement,
			target:  id(groupRBAC, "roles", hcp, "Foo--bar"),
			wantMsg: "roles.rbac.authorization.k8s.io clusters-example/Foo--bar: decodes to roles.rbac.authorization.k8s.io Foo/bar, which does not map back to it",
		},
		"empty namespace part on a kind that is not RBAC": {
			cluster: routing.ClusterManagement,
			target:  id("", "configmaps", hcp, "--foo"),
			wantMsg: `configmaps clusters-example/--foo: name "--foo": not a name topolayer encodes`,
		},
		"not in the hosted control plane namespace": {
			cluster: routing.ClusterManagement,
			target:  id("", "configmaps", "default", "a--b"),
			wantMsg: `configmaps default/a--b: not in the hosted control plane namespace "clusters-example"`,
		},
		"another namespace object": {
			cluster: routing.ClusterManagement,
			target:  id("", "namespaces", "", "default"),
			wantMsg: `namespaces default: not the hosted control plane namespace "clusters-example"`,
		},
		"object named from a hashed generateName": {
			cluster:     routing.ClusterManagement,
			target:      id("", "configmaps", hcp, "team-a-revision-324aede34c07c937x7k2p"),
			annotations: hashedGenAnn,
			wantMsg:     `configmaps clusters-example/team-a-revision-324aede34c07c937x7k2p: name "team-a-revision-324aede34c07c937x7k2p" was generated from the hashed generateName "team-a-revision-324aede34c07c937"`,
		},
		"object not named from the recorded generateName": {
			cluster:     routing.ClusterManagement,
			target:      id("", "configmaps", hcp, "openshift-kube-apiserver--other-x7k2p"),
			annotations: genAnn,
			wantErr:     ErrIdentityMismatch,
		},
		"unknown cluster": {
			cluster: "elsewhere",
			target:  cm,
			wantMsg: `configmaps openshift-authentication/audit: unknown cluster "elsewhere"`,
		},
	}
	h := testHosted()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := h.ToSource(tc.cluster, tc.target, tc.annotations)
			if tc.wantErr == nil && tc.wantMsg == "" {
				if err != nil {
					t.Fatalf("ToSource: %v", err)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("ToSource (-want +got):\n%s", diff)
				}
				return
			}
			if err == nil {
				t.Fatalf("ToSource = %v, want an error", got)
			}
			if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Errorf("error %v is not %v", err, tc.wantErr)
			}
			if !strings.HasPrefix(err.Error(), tc.wantMsg) {
				t.Errorf("error:\n got %s\nwant %s...", err, tc.wantMsg)
			}
		})
	}
}

func TestHostedValidate(t *testing.T) {
	cases := map[string]struct {
		hosted Hosted
		want   []string // one line per error, in order
	}{
		"valid": {
			hosted: testHosted(),
		},
		"no namespace": {
			hosted: Hosted{},
			want:   []string{"namespace: Required value: the hosted control plane namespace"},
		},
		"namespace not a label": {
			hosted: Hosted{Namespace: "clusters.example"},
			want:   []string{`namespace: Invalid value: "clusters.example": must not contain dots`},
		},
		"alias problems": {
			hosted: Hosted{Namespace: hcp, Aliases: []Alias{
				{Source: contract.Identity{Resource: "secrets", Namespace: "a", Name: "s"}, Name: "a--s"},
				{Source: contract.Identity{Resource: "secrets", Namespace: "a", Name: "t"}, Name: "x-0123456789abcdef"},
				{Source: contract.Identity{Resource: "services", Namespace: "a", Name: "svc"}, Name: "has.dot"},
				{Source: contract.Identity{Group: groupRBAC, Resource: "clusterroles", Name: "r"}, Name: "r"},
				{Source: contract.Identity{Group: "core", Resource: "secrets", Namespace: "a", GenerateName: "g-"}, Name: ""},
			}},
			want: []string{
				`aliases[0].name: Invalid value: "a--s": must not contain "--", which encoded names use`,
				`aliases[1].name: Invalid value: "x-0123456789abcdef": must not end in "-" and 16 hex digits, which hashed names use`,
				`aliases[2].name: Invalid value: "has.dot": must not contain dots`,
				`aliases[3].source.namespace: Required value: only namespaced objects can be aliased`,
				`aliases[4].source.name: Required value`,
				`aliases[4].source.generateName: Forbidden: aliases match names`,
				`aliases[4].source.group: Invalid value: "core": the core group is spelled ""`,
				`aliases[4].name: Required value: the existing object's name`,
			},
		},
		"duplicates": {
			hosted: Hosted{Namespace: hcp, Aliases: []Alias{
				testAlias,
				{Source: testAlias.Source, Name: "other"},
				{Source: contract.Identity{Resource: "secrets", Namespace: "b", Name: "c"}, Name: testAlias.Name},
				{Source: contract.Identity{Resource: "configmaps", Namespace: "b", Name: "c"}, Name: testAlias.Name},
			}},
			want: []string{
				`aliases[1].source: Duplicate value: "secrets openshift-authentication/v4-0-config-system-serving-cert (also aliases[0])"`,
				`aliases[2].name: Duplicate value: "oauth-server-crt (also aliases[0])"`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.hosted.Validate()
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIdentityMapper(t *testing.T) {
	src := id("", "configmaps", "a", "b")
	for _, cluster := range []string{routing.ClusterManagement, routing.ClusterGuest, "anything"} {
		t.Run(cluster, func(t *testing.T) {
			got, err := Identity{}.ToTarget(cluster, src)
			if err != nil || got != src {
				t.Errorf("ToTarget = %v, %v; want %v", got, err, src)
			}
			got, err = Identity{}.ToSource(cluster, src, map[string]string{AnnotationStandaloneName: "x"})
			if err != nil || got != src {
				t.Errorf("ToSource = %v, %v; want %v", got, err, src)
			}
		})
	}
}

func BenchmarkToTarget(b *testing.B) {
	h := testHosted()
	ids := []contract.Identity{
		id("", "configmaps", "openshift-authentication", "audit"),
		id(groupRBAC, "clusterroles", "", "system:openshift:foo"),
		id("operator.openshift.io", "authentications", "", "cluster"),
		id("", "services", "openshift-monitoring", strings.Repeat("web", 20)),
		id("", "secrets", "openshift-authentication", "v4-0-config-system-serving-cert"),
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := h.ToTarget(routing.ClusterManagement, ids[i%len(ids)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
