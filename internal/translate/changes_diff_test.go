package translate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/translate/plans"
)

func TestDiffNodes(t *testing.T) {
	type change struct {
		Path     string
		From, To any
	}
	cases := map[string]struct {
		before, after string
		want          []change
	}{
		"equal, whatever the style": {
			before: "a: 'x'\nb: [1, 2]\n", after: "a: x\nb:\n- 1\n- 2\n",
		},
		"a scalar changes": {
			before: "a: {b: x, c: 1}\n", after: "a: {b: y, c: 1}\n",
			want: []change{{"/a/b", "x", "y"}},
		},
		"a mapping comes: each key is a change": {
			before: "metadata: {name: n}\n", after: "metadata: {name: n, annotations: {a/b: x, c: y}}\n",
			want: []change{{"/metadata/annotations/a~1b", nil, "x"}, {"/metadata/annotations/c", nil, "y"}},
		},
		"a key goes": {
			before: "spec: {nodeSelector: {a: b}, x: 1}\n", after: "spec: {x: 1}\n",
			want: []change{{"/spec/nodeSelector/a", "b", nil}},
		},
		"lists of one length index by index": {
			before: "l: [{name: a}, {name: b}]\n", after: "l: [{name: a}, {name: c}]\n",
			want: []change{{"/l/1/name", "b", "c"}},
		},
		"lists of another length change whole": {
			before: "l: [a, b]\n", after: "l: [a]\n",
			want: []change{{"/l", []any{"a", "b"}, []any{"a"}}},
		},
		"a type changes": {
			before: "a: 1\n", after: "a: '1'\n",
			want: []change{{"/a", int64(1), "1"}},
		},
		"null is absent": {
			before: "a: null\n", after: "b: true\n",
			want: []change{{"/b", nil, true}},
		},
		"large mappings, through an index": {
			before: "m: {" + manyKeys(20) + ", gone: x, same: {a: [1]}}\n", after: "m: {new: y, " + manyKeys(20) + ", same: {a: [1]}, k3: changed}\n",
			want: []change{{"/m/k3", "v3", "changed"}, {"/m/gone", "x", nil}, {"/m/new", nil, "y"}},
		},
		"deep paths keep their segments": {
			before: "a: {b: {c: 1, d: 2}, e: [{f: 1}, {g: 2}]}\n", after: "a: {b: {c: 3, d: 4}, e: [{f: 5}, {g: 6}]}\n",
			want: []change{{"/a/b/c", int64(1), int64(3)}, {"/a/b/d", int64(2), int64(4)}, {"/a/e/0/f", int64(1), int64(5)}, {"/a/e/1/g", int64(2), int64(6)}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var got []change
			for _, c := range plans.Diff(yaml.MustParse(tc.before).YNode(), yaml.MustParse(tc.after).YNode(), "by", "kind") {
				if c.By != "by" || c.Kind != "kind" {
					t.Errorf("%s: by %q kind %q", c.Path, c.By, c.Kind)
				}
				got = append(got, change{c.Path, c.From, c.To})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// manyKeys returns n flow mapping entries kI: vI.
func manyKeys(n int) string {
	var entries []string
	for i := range n {
		entries = append(entries, fmt.Sprintf("k%d: v%d", i, i))
	}
	return strings.Join(entries, ", ")
}
