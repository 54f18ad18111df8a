package translate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/topolayer/topolayer/internal/yamlnodetest"
)

// TestBodyJSON checks that bodyJSON writes what kyaml's RNode.MarshalJSON writes, for the
// tags, anchors, aliases and merge keys a body may hold, and refuses what kyaml refuses.
func TestBodyJSON(t *testing.T) {
	cases := map[string]struct {
		in      string
		wantErr string // empty: the same JSON as kyaml
	}{
		"strings and numbers": {in: "a: x\nb: 1\nc: 1.5\nd: true\ne: null\nf: ~\ng: '1'\nh: \"true\"\ni: 0x1F\nj: 1e3\nk: .inf\n", wantErr: "unsupported value"},
		"finite scalars":      {in: "a: x\nb: 1\nc: 1.5\nd: true\ne: null\nf: ~\ng: '1'\nh: \"true\"\ni: 0x1F\nj: 1e3\nk: -0\nl: 12345678901234567890\n"},
		"explicit tags":       {in: "a: !!str 1\nb: !!int '2'\nc: !!float 3\nd: !!bool 'true'\ne: !!null ''\nf: !custom x\n"},
		"timestamps":          {in: "a: 2001-12-14t21:59:43.10-05:00\nb: 2002-12-14\n"},
		"binary":              {in: "a: !!binary aGVsbG8=\n"},
		"block scalars":       {in: "a: |\n  line 1\n  line 2\nb: >\n  folded\n  text\n"},
		"nested":              {in: "metadata:\n  name: x\n  labels: {a: b}\nspec:\n  list: [1, two, {three: 3}, [4]]\n  empty: {}\n  none: []\n"},
		"html characters":     {in: "a: <b>&</b>\n"},
		"unicode":             {in: "a: \"\\u00e9t\\u00e9 \\U0001F600\"\n"},
		"anchors and aliases": {in: "a: &x {b: 1, c: [1, 2]}\nd: *x\ne: &y hello\nf: *y\n"},
		"merge key":           {in: "base: &b {x: 1, y: 2}\nobj:\n  <<: *b\n  y: 3\n"},
		"merge sequence":      {in: "p: &p {x: 1, y: 1}\nq: &q {y: 2, z: 2}\nobj:\n  <<: [*p, *q]\n  w: 0\n"},
		"merge inline":        {in: "obj:\n  <<: {x: 1}\n  y: 2\n"},
		"merge at root":       {in: "<<: {x: 1, y: 1}\ny: 2\n"},
		"int keys at root":    {in: "1: a\ntrue: b\n"},
		"sequence root":       {in: "- a\n- 1\n- {b: c}\n"},
		"int keys nested":     {in: "a:\n  1: x\n", wantErr: "not strings"},
		"duplicate keys":      {in: "a: 1\nb: 2\na: 3\n", wantErr: `mapping key "a" already defined at line 1`},
		"merge of a scalar":   {in: "a:\n  <<: 1\n", wantErr: "map merge requires map"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obj, err := yaml.Parse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			got, gotErr := yamlnodetest.ObjectJSON(obj)
			want, wantErr := obj.MarshalJSON()
			if tc.wantErr != "" {
				if gotErr == nil || !strings.Contains(gotErr.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q (kyaml: %v)", gotErr, tc.wantErr, wantErr)
				}
				if wantErr == nil {
					t.Fatalf("kyaml accepts what bodyJSON refuses: %s", want)
				}
				return
			}
			if wantErr != nil {
				t.Fatalf("kyaml: %v", wantErr)
			}
			if gotErr != nil {
				t.Fatal(gotErr)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("-kyaml +bodyJSON:\n%s", diff)
			}
		})
	}
}

// FuzzBodyJSON checks that bodyJSON agrees with kyaml's MarshalJSON on any small document
// both accept, and never panics.
func FuzzBodyJSON(f *testing.F) {
	for _, s := range []string{"a: 1\n", "a: &x {b: 1}\nc: *x\n", "o:\n  <<: {x: 1}\n  y: 2\n", "- 1\n- x\n", "a: !!binary aGVsbG8=\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if len(in) > 4096 {
			return
		}
		obj, err := yaml.Parse(in)
		if err != nil || obj.YNode() == nil {
			return
		}
		got, gotErr := yamlnodetest.ObjectJSON(obj)
		want, wantErr := obj.MarshalJSON()
		if gotErr == nil && wantErr == nil && string(got) != string(want) {
			t.Fatalf("input %q: kyaml %s, bodyJSON %s", in, want, got)
		}
	})
}
