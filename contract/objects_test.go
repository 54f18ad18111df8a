package contract_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// TestParseObject checks what a body parses into, and what it is refused for.
func TestParseObject(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       map[string]any
		wantErr    string
	}{
		{name: "types of unstructured objects", body: "a: 1\nb: 1.5\nc: true\nd: null\ne: x\nf: [1, y]\ng: {h: 2}\n",
			want: map[string]any{"a": int64(1), "b": 1.5, "c": true, "d": nil, "e": "x", "f": []any{int64(1), "y"}, "g": map[string]any{"h": int64(2)}}},
		{name: "JSON", body: `{"apiVersion":"v1","kind":"ConfigMap","data":{"k":"1"}}`,
			want: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": "1"}}},
		{name: "a huge integer is a float, as JSON decodes it", body: "a: 18446744073709551615\n", want: map[string]any{"a": float64(18446744073709551615)}},
		{name: "timestamp as text", body: "t: 2024-10-14T22:38:20Z\n", want: map[string]any{"t": "2024-10-14T22:38:20Z"}},
		{name: "aliases and merge keys", body: "base: &b {x: 1}\nm:\n  <<: *b\n  y: 2\n", want: map[string]any{"base": map[string]any{"x": int64(1)}, "m": map[string]any{"x": int64(1), "y": int64(2)}}},
		{name: "duplicate keys", body: "metadata:\n  name: a\n  name: b\n", wantErr: "already defined"},
		{name: "a list", body: "- a\n", wantErr: "not an object"},
		{name: "a scalar", body: "x\n", wantErr: "not an object"},
		{name: "NaN", body: "a: .nan\n", wantErr: "not a number JSON can hold"},
		{name: "not YAML", body: "a: [\n", wantErr: "did not find"},
		{name: "a number key, written as text", body: "1: a\n", want: map[string]any{"1": "a"}},
		{name: "a null key", body: "~: a\n", wantErr: `line 1: mapping key "~" is null, not a string`},
		{name: "a null key, spelt null", body: "kind: x\nnull: a\n", wantErr: `line 2: mapping key "null" is null, not a string`},
		{name: "a quoted null key", body: "'~': a\n", want: map[string]any{"~": "a"}},
		{name: "a null key, nested", body: "a: {~: 1}\n", wantErr: "not strings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := contract.ParseObject([]byte(tc.body))
			if contracttest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %#v\nwant %#v", got, tc.want)
			}
		})
	}
}

// FuzzParseObject: any bytes parse or fail without panicking, and what parses holds only the
// types of unstructured objects (DeepCopyJSON panics on any other) and writes as JSON.
func FuzzParseObject(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"))
	f.Add([]byte(`{"a":[1,2.5,true,null,{"b":"c"}]}`))
	f.Add([]byte("a: &x [1]\nb: *x\nc: 0x1f\nd: 1e3\ne: ~\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		obj, err := contract.ParseObject(data)
		if err != nil {
			return
		}
		copied := runtime.DeepCopyJSON(obj)
		js, err := json.Marshal(copied)
		if err != nil {
			t.Fatalf("parsed object does not marshal: %v", err)
		}
		var back map[string]any
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("written JSON does not decode: %v", err)
		}
		if len(back) != len(obj) {
			t.Fatalf("the JSON has %d keys, the object %d", len(back), len(obj))
		}
	})
}
