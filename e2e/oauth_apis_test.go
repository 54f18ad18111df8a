package e2e

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// operatorBinary returns the path of a real binary of ../shared/operators (unpacked where
// TOPOLAYER_OPERATORS says), skipping the test, saying why, when there is none.
func operatorBinary(t *testing.T, name string) string {
	t.Helper()
	bin, err := cluster.OperatorBinary(name)
	if err != nil {
		t.Skip(err)
	}
	return bin
}

// The environments whose users log in through the OAuth APIs, started on first use (only
// the tests that log in need them) and stopped by TestMain.
var oauthEnvs struct {
	sync.Mutex
	envs map[config.TopologyType]*cluster.Environment
	errs map[config.TopologyType]error
}

// oauthEnvironment returns a running environment of the topology whose guest (or single
// cluster) serves the OAuth APIs, starting it on the first call. It skips the test when the
// OAuth API server binary is absent.
func oauthEnvironment(t *testing.T, topology config.TopologyType) *cluster.Environment {
	t.Helper()
	bin := operatorBinary(t, "oauth-apiserver")
	oauthEnvs.Lock()
	defer oauthEnvs.Unlock()
	if env := oauthEnvs.envs[topology]; env != nil {
		return env
	}
	if err := oauthEnvs.errs[topology]; err != nil {
		t.Fatal(err)
	}
	if oauthEnvs.envs == nil {
		oauthEnvs.envs, oauthEnvs.errs = map[config.TopologyType]*cluster.Environment{}, map[config.TopologyType]error{}
	}
	env := &cluster.Environment{Topology: topology, AssetsDir: assetsDir, OAuthAPIServer: bin, Progress: os.Stderr}
	if os.Getenv("TOPOLAYER_E2E_SERVER_OUTPUT") != "" {
		env.Output = os.Stderr
	}
	start := time.Now()
	if err := env.Start(t.Context()); err != nil {
		oauthEnvs.errs[topology] = err
		t.Fatal(err)
	}
	t.Logf("%s environment with the OAuth APIs started in %s", topology, time.Since(start).Round(time.Millisecond))
	oauthEnvs.envs[topology] = env
	return env
}

// stopOAuthEnvironments stops what oauthEnvironment started.
func stopOAuthEnvironments() error {
	oauthEnvs.Lock()
	defer oauthEnvs.Unlock()
	var errs []error
	for _, env := range oauthEnvs.envs {
		errs = append(errs, env.Stop())
	}
	oauthEnvs.envs = nil
	return errors.Join(errs...)
}

// The OAuth API resources a login creates and reads.
var (
	oauthClientsGVR      = schema.GroupVersionResource{Group: "oauth.openshift.io", Version: "v1", Resource: "oauthclients"}
	oauthAccessTokensGVR = schema.GroupVersionResource{Group: "oauth.openshift.io", Version: "v1", Resource: "oauthaccesstokens"}
	usersGVR             = schema.GroupVersionResource{Group: "user.openshift.io", Version: "v1", Resource: "users"}
)

// whoAmI returns the user the cluster's API server authenticates the bearer token as
// (kubectl auth whoami: a SelfSubjectReview).
func whoAmI(t *testing.T, admin *rest.Config, token string) (string, error) {
	t.Helper()
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken = token
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	r, err := cs.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", err
	}
	return r.Status.UserInfo.Username, nil
}

// TestOAuthAPIsServeTokens shows the dev environment's OAuth APIs doing what OpenShift's do,
// without an OAuth server: the guest serves oauth.openshift.io and user.openshift.io
// (aggregated, from the OAuth API server's own etcd prefix), and a bearer token the OAuth
// API stores for a user authenticates that user on the guest's API server (its token
// webhook asks the OAuth API server), while a token it does not know gets 401.
func TestOAuthAPIsServeTokens(t *testing.T) {
	env := oauthEnvironment(t, config.Hosted)
	guest := env.Config(cluster.Guest)
	_, dyn := clients(t, guest)
	ctx := t.Context()

	user, err := dyn.Resource(usersGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "user.openshift.io/v1", "kind": "User", "metadata": map[string]any{"name": "alice"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(oauthClientsGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "oauth.openshift.io/v1", "kind": "OAuthClient", "metadata": map[string]any{"name": "e2e-client"},
		"grantMethod": "auto",
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	raw := base64.RawURLEncoding.EncodeToString(secret)
	sum := sha256.Sum256([]byte(raw))
	if _, err := dyn.Resource(oauthAccessTokensGVR).Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "oauth.openshift.io/v1", "kind": "OAuthAccessToken",
		"metadata":   map[string]any{"name": "sha256~" + base64.RawURLEncoding.EncodeToString(sum[:])},
		"clientName": "e2e-client", "userName": "alice", "userUID": string(user.GetUID()),
		"expiresIn": int64(600), "scopes": []any{"user:full"}, "redirectURI": "https://localhost/",
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := whoAmI(t, guest, "sha256~"+raw); err != nil || got != "alice" {
		t.Errorf("whoami with the stored token = %q, %v; want alice", got, err)
	}
	if _, err := whoAmI(t, guest, "sha256~"+strings.Repeat("A", 43)); !apierrors.IsUnauthorized(err) {
		t.Errorf("whoami with an unknown token: %v, want 401 Unauthorized", err)
	}
	if _, err := os.Stat(env.AuditLog(cluster.Guest)); err != nil {
		t.Errorf("the guest's audit log: %v", err)
	}
}
