package main

import (
	"context"
	"errors"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/mom/runner"
)

// TestCAOOpenIDEgress runs the real cluster-authentication-operator's config observer in
// its sandbox, with an OpenID identity provider whose discovery document is served on
// loopback: without egress it fails on the provider, and NetworkNeeds names the address;
// with the provider's address in Egress it reads the document and succeeds.
func TestCAOOpenIDEgress(t *testing.T) {
	cao, corpusInput := caoAndConfigObserverInput(t)
	in, issuer := caoInputWithEveryIdentityProvider(t, corpusInput)
	u, err := url.Parse(issuer)
	if err != nil {
		t.Fatal(err)
	}
	provider, err := runner.ParseEndpoint(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		egress []runner.Endpoint
	}{
		{"no egress", nil},
		{"egress to the provider", []runner.Endpoint{provider}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &runner.Exec{Name: "cao", Command: []string{cao}, Egress: tc.egress, Limits: runner.Limits{Timeout: 2 * time.Minute}}
			out := filepath.Join(t.TempDir(), "output-dir")
			res, err := e.Run(context.Background(), runner.Request{InputDir: in, OutputDir: out,
				Now: time.Date(2025, 8, 7, 22, 38, 20, 0, time.UTC), Controllers: []string{"TODO-configObserver"}})
			if res == nil {
				t.Fatalf("Run: %v", err)
			}
			if !strings.HasPrefix(res.Sandbox, "netns") {
				t.Skipf("no network namespace on this machine: %s", res.Sandbox)
			}
			dir, rerr := contract.ReadOutputDir(out, contract.ReadOptions{})
			if rerr != nil {
				t.Fatalf("ReadOutputDir: %v (run: %v)", rerr, err)
			}
			var observer contract.ControllerResult
			for _, r := range dir.ControllerResults.ControllerResults {
				if r.ControllerName == "TODO-configObserver" {
					observer = r
				}
			}
			needs := runner.NetworkNeeds(res.Stderr)
			if tc.egress == nil {
				var crash *runner.CrashError
				if !errors.As(err, &crash) || observer.Status != contract.ControllerFailed || !slices.Equal(needs, []string{u.Host}) {
					t.Errorf("run error %v, config observer %s, network needed %q; want a failure on the provider, %s", err, observer.Status, needs, u.Host)
				}
				// plan warns of it, naming the address and the field that allows it.
				_, errOut, _ := run(t, "plan", "--config", caoStandaloneConfig, "--from", out, "--operator", "cluster-authentication-operator")
				want := "warning: " + out + ": controller TODO-configObserver failed: cluster-authentication-operator needed network to " + u.Host + "; add it to operators[].egress in " + caoStandaloneConfig
				if !strings.Contains(errOut, want) {
					t.Errorf("plan does not warn %q:\n%s", want, errOut)
				}
				return
			}
			if err != nil || observer.Status != contract.ControllerSucceeded || len(needs) > 0 {
				t.Errorf("run error %v, config observer %s %v, network needed %q; want success", err, observer.Status, observer.Errors, needs)
			}
		})
	}
}
