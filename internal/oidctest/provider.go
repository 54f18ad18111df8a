package oidctest

import (
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Provider serves an OpenID provider's discovery document (/.well-known/openid-configuration)
// on loopback over TLS until tb ends, counting the requests for it in served (nil: not
// counted). It returns the issuer URL and the server's CA certificate, PEM-encoded.
func Provider(tb testing.TB, served *atomic.Int32) (issuer string, caPEM []byte) {
	tb.Helper()
	srv := httptest.NewTLSServer(nil)
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/openid-configuration" {
			http.NotFound(w, r)
			return
		}
		if served != nil {
			served.Add(1)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": srv.URL, "authorization_endpoint": srv.URL + "/auth", "token_endpoint": srv.URL + "/token",
			"userinfo_endpoint": srv.URL + "/userinfo", "jwks_uri": srv.URL + "/keys",
			"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		})
	})
	tb.Cleanup(srv.Close)
	return srv.URL, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}
