package fixtureparity_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/fixtureparity"
	"github.com/topolayer/topolayer/internal/translate/parity"
)

func TestFlatten(t *testing.T) {
	tests := map[string]struct {
		in   string
		want map[string]any
	}{
		"containers by name, mounts by path, env by name": {
			in: `{spec: {containers: [{name: a, image: x, volumeMounts: [{name: v, mountPath: /tmp}], env: [{name: E, value: "1"}]}]}}`,
			want: map[string]any{
				"spec.containers[name=a].name": "a", "spec.containers[name=a].image": "x",
				"spec.containers[name=a].volumeMounts[mountPath=/tmp].name": "v", "spec.containers[name=a].volumeMounts[mountPath=/tmp].mountPath": "/tmp",
				"spec.containers[name=a].env[name=E].name": "E", "spec.containers[name=a].env[name=E].value": "1",
			},
		},
		"lists without names by index, empty values as leaves": {
			in:   `{args: [a, b], emptyDir: {}, tolerations: [{key: k}], items: []}`,
			want: map[string]any{"args[0]": "a", "args[1]": "b", "emptyDir": map[string]any{}, "tolerations[0].key": "k", "items": []any{}},
		},
		"duplicate names fall back to the index": {
			in:   `{env: [{name: A}, {name: A}]}`,
			want: map[string]any{"env[0].name": "A", "env[1].name": "A"},
		},
		"keys that are no identifiers are bracketed": {
			in:   `{metadata: {annotations: {"example.com/x": "y"}}, data: {config.yaml: z}}`,
			want: map[string]any{"metadata.annotations[example.com/x]": "y", "data[config.yaml]": "z"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			var v any
			if err := sigsyaml.Unmarshal([]byte(tc.in), &v); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, fixtureparity.Flatten(v)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseReasons(t *testing.T) {
	tests := map[string]struct {
		in, wantErr string
	}{
		"a valid row":        {in: `{reasons: [{name: a, path: "spec.*", status: [missing], fixture: "x|y", reason: why}]}`},
		"an unknown field":   {in: `{reasons: [{name: a, path: p, reason: why, because: no}]}`, wantErr: `unknown field "because"`},
		"no reason":          {in: `{reasons: [{name: a, path: p}]}`, wantErr: "reasons[0].reason: Required value: say why the leaves may differ"},
		"a duplicate name":   {in: `{reasons: [{name: a, path: p, reason: r}, {name: a, path: q, reason: r}]}`, wantErr: `reasons[1].name: Duplicate value: "a"`},
		"an unknown status":  {in: `{reasons: [{name: a, path: p, reason: r, status: [equal]}]}`, wantErr: `reasons[0].status[0]: Unsupported value: "equal"`},
		"a bad value regexp": {in: `{reasons: [{name: a, path: p, reason: r, placed: "("}]}`, wantErr: "reasons[0].placed: Invalid value"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := fixtureparity.ParseReasons([]byte(tc.in))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestDefaultReasons: the committed table parses, every row has words a reviewer can read.
func TestDefaultReasons(t *testing.T) {
	for _, r := range fixtureparity.DefaultReasons().Rows {
		if len(strings.Fields(r.Reason)) < 8 {
			t.Errorf("reason %s: %q says too little", r.Name, r.Reason)
		}
	}
}

func placedObject(t *testing.T, id contract.Identity, targetName, body string) parity.Object {
	t.Helper()
	var m map[string]any
	if err := sigsyaml.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	target := id
	target.Namespace, target.Name = "hcp-namespace", targetName
	return parity.Object{Source: id, Cluster: "management", Identity: target, Body: m}
}

func fixture(t *testing.T, body string) fixtureparity.Fixture {
	t.Helper()
	f, err := fixtureparity.ParseFixture("f.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCompare(t *testing.T) {
	pairs := []fixtureparity.Pair{
		{Name: "config", Kind: "ConfigMap", FixtureName: "server", Placed: contract.Identity{Resource: "configmaps", Namespace: "ns", Name: "cli"},
			Keys: []fixtureparity.KeyPair{{Fixture: "config.yaml", Placed: "cli", Document: true}}},
		{Name: "deployment", Kind: "Deployment", FixtureName: "server", Placed: contract.Identity{Group: "apps", Resource: "deployments", Namespace: "ns", Name: "server"}},
	}
	reasons, err := fixtureparity.ParseReasons([]byte(`{reasons: [{name: fake-image, path: "spec.containers[name=*].image", status: [different], fixture: "[a-z-]+", reason: the test names images by component}]}`))
	if err != nil {
		t.Fatal(err)
	}
	fixtures := []fixtureparity.Fixture{
		fixture(t, `{kind: ConfigMap, metadata: {name: server}, data: {config.yaml: "a: 1\nb: {c: x}\n"}}`),
		fixture(t, `{kind: Deployment, metadata: {name: server}, spec: {replicas: 3, containers: [{name: s, image: server, args: [x]}], volumes: [{name: c, configMap: {name: server}}]}}`),
		fixture(t, `{kind: ControlPlaneComponent, metadata: {name: server}}`),
	}
	placed := []parity.Object{
		placedObject(t, pairs[0].Placed, "ns--cli", `{kind: ConfigMap, metadata: {name: ns--cli}, data: {cli: '{"a": 1, "b": {"c": "y"}}'}}`),
		placedObject(t, pairs[1].Placed, "ns--server", `{kind: Deployment, metadata: {name: ns--server}, spec: {replicas: 3, containers: [{name: s, image: quay.io/x:1, command: [y]}], volumes: [{name: c, configMap: {name: ns--cli}}]}}`),
	}
	v := fixtureparity.Compare("v", fixtures, placed, pairs, reasons)
	type row struct{ pair, path, status, reason string }
	var got []row
	for _, o := range v.Objects {
		for _, l := range o.Leaves {
			if l.Status != fixtureparity.Equal {
				reason, _, _ := strings.Cut(l.Reason, ":")
				got = append(got, row{o.Pair, l.Path, string(l.Status), reason})
			}
		}
	}
	want := []row{
		{"config", "data[config.yaml].b.c", "different", ""},
		{"config", "metadata.name", "different", "paired-name"},
		{"deployment", "metadata.name", "different", "paired-name"},
		{"deployment", "spec.containers[name=s].args[0]", "missing", ""},
		{"deployment", "spec.containers[name=s].command[0]", "extra", ""},
		{"deployment", "spec.containers[name=s].image", "different", "fake-image"},
		{"deployment", "spec.volumes[name=c].configMap.name", "different", "paired-name"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(row{})); diff != "" {
		t.Errorf("leaves that are not equal (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"ControlPlaneComponent server"}, v.Unpaired); diff != "" {
		t.Errorf("unpaired (-want +got):\n%s", diff)
	}
	// The Deployment's 8 fixture leaves: kind, replicas, the container's and the volume's
	// names equal; its name, image and the volume's ConfigMap explained; args[0] missing.
	dep := v.Objects[1].Counts
	if dep.FixtureLeaves != 8 || dep.Equal != 4 || dep.Explained != 3 || dep.Missing != 1 || dep.Extra != 1 || dep.EqualPercent() != 50 {
		t.Errorf("deployment counts %+v", dep)
	}
	if err := fixtureparity.NewReport(v).Err(); !errors.Is(err, fixtureparity.ErrUnexplained) {
		t.Errorf("Err() = %v, want ErrUnexplained", err)
	}
}

func FuzzParseReasons(f *testing.F) {
	f.Add([]byte(`{reasons: [{name: a, path: "spec.*[name=*].{image,name}", status: [missing], fixture: "x|y", reason: why}]}`))
	f.Add([]byte(`reasons: [{name: a, path: "**", reason: r, placed: "("}]`))
	f.Add([]byte(`{`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := fixtureparity.ParseReasons(data)
		if err != nil {
			return
		}
		// A table that parses explains leaves without panicking.
		fixtures := []fixtureparity.Fixture{{File: "f", Object: map[string]any{"kind": "Secret", "metadata": map[string]any{"name": "s"}, "data": map[string]any{"k": "v"}}}}
		pairs := []fixtureparity.Pair{{Name: "p", Kind: "Secret", FixtureName: "s", Placed: contract.Identity{Resource: "secrets", Name: "s"}}}
		fixtureparity.Compare("v", fixtures, nil, pairs, r)
	})
}
