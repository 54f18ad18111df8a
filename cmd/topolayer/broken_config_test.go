package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/topolayer/topolayer/cmd/internal/cli/clitest"
	"github.com/topolayer/topolayer/config/configtest"
)

// brokenConfigs are config's broken configurations: each file has one breakage, and its leading
// comments "# field: ..." and "# reason: ..." say what the error must name.
const brokenConfigs = "../../config/testdata/broken"

// countingServer is an API server that answers nothing and counts every request made to it,
// with a kubeconfig that points at it.
func countingServer(t *testing.T) (kubeconfig string, requests *atomic.Int64) {
	t.Helper()
	requests = &atomic.Int64{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "this test's API server serves nothing", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u"}
	kc.CurrentContext = "c"
	kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		t.Fatal(err)
	}
	// The kubeconfig does lead to the server: a request through it is counted.
	cfg, err := loadKubeconfig("kubeconfig", kubeconfig, "")
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := client.Get(cfg.Host + "/version")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if requests.Swap(0) != 1 {
		t.Fatal("the counting server did not see the request")
	}
	return kubeconfig, requests
}

// TestBrokenConfigsRefused runs `topolayer validate` and `topolayer run` on every broken
// configuration: both refuse it with the file, the field path and the reason, neither panics,
// and run stops before it makes a single request to the clusters it was given.
func TestBrokenConfigsRefused(t *testing.T) {
	kubeconfig, requests := countingServer(t)
	for _, c := range configtest.BrokenConfigs(t, brokenConfigs) {
		t.Run(filepath.Base(c.File), func(t *testing.T) {
			clusters := []string{"--kubeconfig", kubeconfig}
			if c.Hosted {
				clusters = []string{"--management-kubeconfig", kubeconfig, "--guest-kubeconfig", kubeconfig}
			}
			for _, args := range [][]string{
				{"validate", "--config", c.File},
				append([]string{"run", "--config", c.File, "--work-dir", t.TempDir(), "--metrics-bind-address", "0"}, clusters...),
			} {
				stdout, _, err := runWithTimeout(t, 30*time.Second, args...)
				if err == nil {
					t.Fatalf("%s: accepted:\n%s", args[0], stdout)
				}
				for _, want := range []string{c.File + ": ", c.Field, c.Reason} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("%s: the error does not say %q:\n%v", args[0], want, err)
					}
				}
				if stdout != "" {
					t.Errorf("%s: wrote to stdout: %q", args[0], stdout)
				}
			}
			if n := requests.Load(); n != 0 {
				t.Fatalf("run made %d requests to the cluster before refusing the configuration", n)
			}
		})
	}
}

// runWithTimeout executes the command line under a context that ends after d, so that a
// command that wrongly starts does not block the test.
func runWithTimeout(t *testing.T, d time.Duration, args ...string) (string, string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return clitest.Execute(ctx, NewRootCommand, args...)
}
