package guestidentity

import (
	"testing"

	"github.com/topolayer/topolayer/internal/yamlnode"
	"github.com/topolayer/topolayer/internal/yamlnodetest"
)

// TestMountVolume: the volume Mount copies and names is the one it
// parsed for each secret before.
func TestMountVolume(t *testing.T) {
	items, err := mountItems()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"guest-kubeconfig-abc", "true", "1", "ünï", "q\"uote", "\u2028"} {
		want, err := parseVolume(name)
		if err != nil {
			t.Fatal(err)
		}
		got := items[0].Copy()
		n, _ := yamlnode.Lookup(got, "secret", "secretName")
		n.YNode().Value = name
		if d := yamlnodetest.NodeDiffExact(want.YNode(), got.YNode(), ""); d != "" {
			t.Errorf("%q: %s", name, d)
		}
	}
}
