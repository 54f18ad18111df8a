package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The topolayer binary carries the product only: the dev environment (envtest, in
// topolayer-devenv), the e2e harness and the benchmarks' plotting stay out of it.
func TestNoDevelopmentDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, p := range strings.Fields(string(out)) {
		for _, banned := range []string{"sigs.k8s.io/controller-runtime/pkg/envtest", "gonum.org/", "github.com/topolayer/topolayer/e2e", "github.com/topolayer/topolayer/hack"} {
			if strings.HasPrefix(p, banned) {
				t.Errorf("topolayer imports %s", p)
			}
		}
	}
}
