package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/oidctest"
	"github.com/topolayer/topolayer/mom/manager"
)

// TestRealCAOOpenIDEgress runs the real cluster-authentication-operator, unmodified,
// through the shipped standalone example with an OpenID identity provider whose discovery
// document is served on loopback: without egress its sandbox cannot reach the provider and
// the status names what it needed and where to allow it; with the provider's address in
// operators[].egress the operator reads the document and the status is clear of it.
func TestRealCAOOpenIDEgress(t *testing.T) {
	bin := caoBinary(t)
	if os.Getenv(corpus.EnvVar) == "" {
		t.Skipf("%s is not set: no CAO corpus for the resident operator's objects", corpus.EnvVar)
	}
	const op = "cluster-authentication-operator"
	rc := standalone.Config(cluster.Single)
	seedStandaloneCAO(t, rc)
	var served atomic.Int32
	issuer, caPEM := oidctest.Provider(t, &served)
	u, err := url.Parse(issuer)
	if err != nil {
		t.Fatal(err)
	}

	cs, dyn := clients(t, rc)
	oauths := dyn.Resource(schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"})
	for _, obj := range []any{
		&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "egress-oidc-secret", Namespace: "openshift-config"}, Data: map[string][]byte{"clientSecret": []byte("s")}},
		&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "egress-oidc-ca", Namespace: "openshift-config"}, Data: map[string]string{"ca.crt": string(caPEM)}},
	} {
		var err error
		switch o := obj.(type) {
		case *corev1.Secret:
			_, err = cs.CoreV1().Secrets(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
			t.Cleanup(func() {
				_ = cs.CoreV1().Secrets(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		case *corev1.ConfigMap:
			_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(t.Context(), o, metav1.CreateOptions{})
			t.Cleanup(func() {
				_ = cs.CoreV1().ConfigMaps(o.Namespace).Delete(context.Background(), o.Name, metav1.DeleteOptions{})
			})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	idp := `{"spec":{"identityProviders":[{"name":"oidc","mappingMethod":"claim","type":"OpenID","openID":{"clientID":"id",` +
		`"clientSecret":{"name":"egress-oidc-secret"},"ca":{"name":"egress-oidc-ca"},"issuer":"` + issuer + `",` +
		`"claims":{"preferredUsername":["preferred_username"],"name":["name"],"email":["email"]}}}]}}`
	if _, err := oauths.Patch(t.Context(), "cluster", types.MergePatchType, []byte(idp), metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = oauths.Patch(context.Background(), "cluster", types.MergePatchType, []byte(`{"spec":{"identityProviders":null}}`), metav1.PatchOptions{FieldManager: "cluster-admin"})
	})

	kubeDir := writeKubeconfigs(t, standalone)
	for _, tc := range []struct {
		name   string
		egress []string
	}{
		{"refused", nil},
		{"allowed", []string{u.Host}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			statusNS := newNamespace(t, rc)
			cfgFile := configWith(t, filepath.Join("cluster-authentication-operator", "standalone.yaml"), func(cfg *config.TopologyConfig) {
				cfg.Operators[0].Command = []string{bin}
				cfg.Operators[0].Egress = tc.egress
				cfg.Manager.Namespace = statusNS
			})
			before := served.Load()
			p := startRun(t, "--config", cfgFile, "--leader-elect=false", "-v", "1", "--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single))
			defer p.stop(t)
			status := func(ctx context.Context) string {
				st, err := cs.CoreV1().ConfigMaps(statusNS).Get(ctx, manager.StatusName(op), metav1.GetOptions{})
				if err != nil {
					return ""
				}
				return st.Data["status.yaml"]
			}
			// The first run's status, then the runs it triggers until the scheduler idles.
			eventuallyWithin(t, "the operator's status", 3*time.Minute, func(ctx context.Context) (bool, error) {
				return status(ctx) != "", nil
			})
			settle(t, p, op)
			y := status(t.Context())
			t.Logf("status of the last run:\n%s", y)
			var rec manager.RunRecord
			if err := yaml.Unmarshal([]byte(y), &rec); err != nil {
				t.Fatalf("status.yaml: %v", err)
			}
			hint := "operator " + op + " needed network to " + u.Host + "; add it to operators[].egress"
			if tc.egress == nil {
				if !slices.Equal(rec.NetworkNeeded, []string{u.Host}) || !strings.Contains(rec.Message, hint) {
					t.Errorf("the status does not say the operator needed network to %s and where to allow it: networkNeeded %q, message %q", u.Host, rec.NetworkNeeded, rec.Message)
				}
				if served.Load() != before {
					t.Errorf("the provider was reached from a sandbox without egress")
				}
				return
			}
			if len(rec.NetworkNeeded) > 0 || strings.Contains(rec.Message, "needed network") {
				t.Errorf("the status still reports network needed: %q, %q", rec.NetworkNeeded, rec.Message)
			}
			for _, f := range rec.FailedControllers {
				if strings.Contains(f, "IDP oidc") {
					t.Errorf("a controller still fails on the provider: %s", f)
				}
			}
			if want := "netns (egress: " + u.Host + ")"; rec.Sandbox != want {
				t.Errorf("sandbox %q, want %q", rec.Sandbox, want)
			}
			if served.Load() == before {
				t.Errorf("the operator never read the provider's discovery document")
			}
		})
	}
}
