package oidctest_test

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/topolayer/topolayer/internal/oidctest"
)

// TestProvider: the discovery document is served over TLS with the returned CA, names the
// issuer, and is counted; other paths are not found and not counted.
func TestProvider(t *testing.T) {
	var served atomic.Int32
	issuer, caPEM := oidctest.Provider(t, &served)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		t.Fatal("the CA is not a PEM certificate")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	tests := map[string]struct {
		path       string
		wantStatus int
		wantServed int32
	}{
		"discovery":  {path: "/.well-known/openid-configuration", wantStatus: http.StatusOK, wantServed: 1},
		"other path": {path: "/keys", wantStatus: http.StatusNotFound, wantServed: 1},
	}
	for _, name := range []string{"discovery", "other path"} {
		tc := tests[name]
		t.Run(name, func(t *testing.T) {
			resp, err := client.Get(issuer + tc.path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if got := served.Load(); got != tc.wantServed {
				t.Errorf("served %d, want %d", got, tc.wantServed)
			}
			if tc.wantStatus != http.StatusOK {
				return
			}
			var doc map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
				t.Fatal(err)
			}
			if doc["issuer"] != issuer {
				t.Errorf("issuer %v, want %s", doc["issuer"], issuer)
			}
		})
	}
}
