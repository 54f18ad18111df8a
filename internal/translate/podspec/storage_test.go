package podspec_test

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/internal/translate/podspec"
)

// TestStorage: which containers of a pod spec have a writable root filesystem, and the
// ephemeral-storage limit the kubelet holds the pod to (the app containers' sum, or an init
// container's where it is larger; none when no container sets one).
func TestStorage(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		writable   []string
		limit      string // "" for none
		err        string
	}{
		{"no limits, writable roots", `{containers: [{name: a}, {name: b, securityContext: {readOnlyRootFilesystem: true}}]}`, []string{"containers[0]"}, "", ""},
		{"read-only roots", `{containers: [{name: a, securityContext: {readOnlyRootFilesystem: true}}]}`, nil, "", ""},
		{"the app containers' sum", `{containers: [{name: a, resources: {limits: {ephemeral-storage: 1Gi}}}, {name: b, resources: {limits: {ephemeral-storage: 512Mi}}}]}`,
			[]string{"containers[0]", "containers[1]"}, "1536Mi", ""},
		{"an init container's, larger", `{initContainers: [{name: i, resources: {limits: {ephemeral-storage: 2Gi}}}], containers: [{name: a, resources: {limits: {ephemeral-storage: 1Gi}}}]}`,
			[]string{"initContainers[0]", "containers[0]"}, "2Gi", ""},
		{"an init container's alone", `{initContainers: [{name: i, resources: {limits: {ephemeral-storage: 64Mi}}}], containers: [{name: a, securityContext: {readOnlyRootFilesystem: true}}]}`,
			[]string{"initContainers[0]"}, "64Mi", ""},
		{"a bare number of bytes", `{containers: [{name: a, resources: {limits: {ephemeral-storage: 1048576}}}]}`, []string{"containers[0]"}, "1Mi", ""},
		{"not a quantity", `{containers: [{name: a, resources: {limits: {ephemeral-storage: lots}}}]}`, nil, "", `containers[0].resources.limits.ephemeral-storage: "lots" is not a quantity`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec map[string]any
			if err := yaml.Unmarshal([]byte(tc.spec), &spec); err != nil {
				t.Fatal(err)
			}
			ps, err := podspec.StorageOf(spec)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("StorageOf: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := podspec.WritableRoots(ps); !slices.Equal(got, tc.writable) {
				t.Errorf("WritableRoots = %q, want %q", got, tc.writable)
			}
			limit, ok := podspec.EphemeralStorageLimit(ps)
			if ok != (tc.limit != "") || ok && limit.Cmp(resource.MustParse(tc.limit)) != 0 {
				t.Errorf("EphemeralStorageLimit = %s, %v; want %q", limit.String(), ok, tc.limit)
			}
		})
	}
}

func TestQuantityOf(t *testing.T) {
	for _, tc := range []struct {
		raw  any
		want string // "" for an error
	}{
		{"64Mi", "64Mi"},
		{int64(1048576), "1Mi"},
		{1.5, "1500m"},
		{"64 Mi", ""},
		{map[string]any{}, ""},
	} {
		q, text, err := podspec.QuantityOf(tc.raw)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("QuantityOf(%#v) = %s, want an error", tc.raw, q.String())
		case tc.want != "" && (err != nil || q.Cmp(resource.MustParse(tc.want)) != 0):
			t.Errorf("QuantityOf(%#v) = %s, %v, want %s", tc.raw, q.String(), err, tc.want)
		case text == "":
			t.Errorf("QuantityOf(%#v): no text for a message", tc.raw)
		}
	}
}
