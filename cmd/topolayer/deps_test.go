package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The topolayer binary carries the product only: the dev environment (envtest, in
// topolayer-devenv), the e2e harness and the benchmarks' plotting stay out of it, and so
// does the API server's own machinery, which only tests use as an oracle.
func TestNoDevelopmentDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	banned := map[string]string{
		"sigs.k8s.io/controller-runtime/pkg/envtest": "the dev environment, in topolayer-devenv",
		"gonum.org/":                          "the benchmarks' plots, in hack/",
		"github.com/topolayer/topolayer/e2e":  "the e2e harness",
		"github.com/topolayer/topolayer/hack": "the benchmarks and the demo",
		"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation": "the API server's whole CRD validation (CEL, its webhook client, gRPC: 16 MB of binary, 18 MiB in every process); shadow.Validate checks what a shadow changes",
		"github.com/google/cel-go": "CEL, linked only by the API server's validation",
		"google.golang.org/grpc":   "gRPC, linked only by the API server's egress selector",
	}
	for _, p := range strings.Fields(string(out)) {
		for prefix, why := range banned {
			if strings.HasPrefix(p, prefix) {
				t.Errorf("topolayer imports %s: %s", p, why)
			}
		}
	}
}
