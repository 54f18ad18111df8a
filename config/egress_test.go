package config_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/topolayer/topolayer/config"
)

// TestEgressConfig: operators[].egress entries are endpoints, refused one by one with the
// file, the entry and the reason; none is allowed by default.
func TestEgressConfig(t *testing.T) {
	op := func(egress string) string {
		return header + "operators:\n- name: a\n  command: [x]\n" + egress
	}
	for _, tc := range []struct {
		name, in   string
		want       []string // nil: valid
		wantEgress []string
	}{
		{name: "none", in: op("")},
		{name: "names, addresses and networks", in: op("  egress: [idp.example.com:443, 127.0.0.1:8443, '[::1]:8443', 10.0.0.0/24:636, '[fd00::/64]:443']\n"),
			wantEgress: []string{"idp.example.com:443", "127.0.0.1:8443", "[::1]:8443", "10.0.0.0/24:636", "[fd00::/64]:443"}},
		{name: "no port", in: op("  egress: [idp.example.com]\n"), want: []string{"cfg.yaml", "operators[0].egress[0]", "not HOST:PORT"}},
		{name: "a wildcard name", in: op("  egress: ['*.example.com:443']\n"), want: []string{"operators[0].egress[0]", "wildcards are not allowed"}},
		{name: "every address", in: op("  egress: [0.0.0.0/0:443]\n"), want: []string{"operators[0].egress[0]", "every address"}},
		{name: "the unspecified address", in: op("  egress: [0.0.0.0:443]\n"), want: []string{"operators[0].egress[0]", "not an address of one host"}},
		{name: "port zero", in: op("  egress: [idp.example.com:0]\n"), want: []string{"operators[0].egress[0]", "from 1 to 65535"}},
		{name: "host bits", in: op("  egress: [10.0.0.1/24:443]\n"), want: []string{"operators[0].egress[0]", "did you mean 10.0.0.0/24"}},
		{name: "twice", in: op("  egress: [idp.example.com:443, IDP.example.com:443]\n"), want: []string{"operators[0].egress[1]", "Duplicate", "also egress[0]"}},
		{name: "the second of two", in: op("  egress: [idp.example.com:443, 'idp:x']\n"), want: []string{"operators[0].egress[1]", "idp:x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cfg.yaml")
			if err := os.WriteFile(path, []byte(tc.in), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := config.Load(path)
			if tc.want == nil {
				if err != nil {
					t.Fatal(err)
				}
				if got := cfg.Operators[0].Egress; !slices.Equal(got, tc.wantEgress) {
					t.Errorf("egress = %q, want %q", got, tc.wantEgress)
				}
				return
			}
			wantRefused(t, err, tc.in, tc.want...)
		})
	}
}
