//go:build linux

package e2e

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/internal/e2e/cluster"
	"github.com/topolayer/topolayer/internal/e2e/podrun"
	"github.com/topolayer/topolayer/internal/syncbuf"
)

// loginResync is the operator's resync period in the login tests. CAO names a new identity
// provider's secret in its server's configuration and Deployment in a run whose config
// observer runs, but copies it only in a run whose resource syncer comes after that
// observer (upstream's apply-configuration shuffles its controllers): until it does, the
// Deployment mounts a Secret that does not exist and no kubelet starts it. Runs on
// unchanged inputs give it those runs, and write nothing else.
var loginResync = &metav1.Duration{Duration: 5 * time.Second}

// challengingClient is the OAuth client command-line logins use: it answers a password
// challenge (HTTP basic) with a token in the redirect, as `oc login -u` does.
const challengingClient = "openshift-challenging-client"

// createChallengingClient creates the OAuthClient challengingClient, which CAO does not
// write offline, with its redirect to the OAuth server at the host route.
func createChallengingClient(t *testing.T, dyn dynamic.Interface, route string) {
	t.Helper()
	if _, err := dyn.Resource(oauthClientsGVR).Create(t.Context(), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "oauth.openshift.io/v1", "kind": "OAuthClient", "metadata": map[string]any{"name": challengingClient},
		"grantMethod": "auto", "respondWithChallenges": true,
		"redirectURIs": []any{"https://" + route + "/oauth/token/implicit"},
	}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// login asks the OAuth server listening at addr (its Route's host, issuer) for a token with
// the challenging client and HTTP basic credentials, as `oc login` does: the token from
// the redirect, or the HTTP status it answered with.
func login(ctx context.Context, addr, issuer, user, password string) (token string, status int, err error) {
	u := issuer + "/oauth/authorize?" + url.Values{"response_type": {"token"}, "client_id": {challengingClient}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", 0, err
	}
	req.SetBasicAuth(user, password)
	req.Header.Set("X-CSRF-Token", "1")
	resp, err := routeClient(addr).Do(req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusFound {
		return "", resp.StatusCode, nil
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return "", resp.StatusCode, err
	}
	frag, err := url.ParseQuery(loc.Fragment)
	if err != nil {
		return "", resp.StatusCode, err
	}
	if frag.Get("access_token") == "" {
		return "", resp.StatusCode, fmt.Errorf("redirected without a token: %s", loc.Redacted())
	}
	return frag.Get("access_token"), resp.StatusCode, nil
}

// routeClient is an HTTP client of the server listening at addr, whatever host a URL names
// (the Route's host resolves to where the placed server listens), which does not follow
// redirects.
func routeClient(addr string) *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, network, addr)
			},
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // the server's certificate is the test's own
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       10 * time.Second,
	}
}

// getJSON GETs url from the server at addr and decodes the JSON answer into v.
func getJSON(ctx context.Context, addr, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := routeClient(addr).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %s", url, resp.Status, body)
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(body, v)
}

// htpasswdLine is an htpasswd file's line for user and password (bcrypt).
func htpasswdLine(t *testing.T, user, password string) []byte {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(user + ":" + string(hash) + "\n")
}

// servingCertSecret is a serving certificate for the OAuth server (self-signed, for host).
func servingCertSecret(t *testing.T, namespace, name, host string) *corev1.Secret {
	t.Helper()
	cert, key, err := certutil.GenerateSelfSignedCertKey(host, nil, []string{"localhost"})
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
}

// appsDomain is the ingress domain of the example's seed (config.openshift.io Ingress).
const appsDomain = "apps.example.devcluster.openshift.com"

// routerCerts is the router-certs Secret an ingress operator publishes in
// openshift-config-managed: per ingress domain, the default certificate and its key.
func routerCerts(t *testing.T, domain string) *corev1.Secret {
	t.Helper()
	cert, key, err := certutil.GenerateSelfSignedCertKey("*."+domain, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "router-certs", Namespace: "openshift-config-managed"},
		Data:       map[string][]byte{domain: append(cert, key...)},
	}
}

// oauthServerConfig is what the login needs of the OsinServerConfig CAO wrote: where the
// server listens, its issuer, and the kubeconfig it reaches the guest with.
type oauthServerConfig struct {
	ServingInfo struct {
		BindAddress string `json:"bindAddress"`
	} `json:"servingInfo"`
	OAuthConfig struct {
		MasterPublicURL string `json:"masterPublicURL"`
	} `json:"oauthConfig"`
	KubeClientConfig struct {
		KubeConfig string `json:"kubeConfig"`
	} `json:"kubeClientConfig"`
}

// readOAuthServerConfig parses the OsinServerConfig in the cliconfig ConfigMap.
func readOAuthServerConfig(t *testing.T, cs kubernetes.Interface, namespace, name string) oauthServerConfig {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var c oauthServerConfig
	if err := json.Unmarshal([]byte(cm.Data["v4-0-config-system-cliconfig"]), &c); err != nil {
		t.Fatalf("%s/%s: the OsinServerConfig: %v", namespace, name, err)
	}
	return c
}

// auditUsers counts the requests of an API server's audit log (JSON lines) by user, for
// requests whose user agent starts with agent.
func auditUsers(t *testing.T, file, agent string) map[string]int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	users := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct {
			Stage     string `json:"stage"`
			UserAgent string `json:"userAgent"`
			User      struct {
				Username string `json:"username"`
			} `json:"user"`
		}
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Stage != "ResponseComplete" {
			continue
		}
		if strings.HasPrefix(ev.UserAgent, agent) {
			users[ev.User.Username]++
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return users
}

// TestLoginHosted is what a user of a hosted cluster does: log in. The real
// cluster-authentication-operator runs through topolayer run on a hosted dev environment
// whose guest serves the OAuth APIs; the OAuth server it places in the HCP namespace runs
// (a kubelet-less pod, package podrun) from the Deployment, ConfigMaps and Secrets read back
// from the management server; an htpasswd identity provider added on the guest as a user
// adds it gives a token through the challenging client, and the guest's API server says
// who it belongs to. Removing the provider stops the login.
func TestLoginHosted(t *testing.T) {
	cao := caoBinary(t)
	oauthServer := operatorBinary(t, "oauth-server")
	env := oauthEnvironment(t, config.Hosted)
	hcpNS := env.HostedControlPlane().Namespace
	mgmt, guest := env.Config(cluster.Management), env.Config(cluster.Guest)
	cfgFile := configWith(t, filepath.Join("cluster-authentication-operator", "hosted.yaml"), func(cfg *config.TopologyConfig) {
		cfg.Operators[0].Command = []string{cao}
		cfg.Operators[0].Resync = loginResync
		// Where the HCP namespace's kube-apiserver Service would take the pods: the dev
		// environment's guest API server.
		cfg.Topology.Hosted.GuestIdentity.Server = strings.TrimSuffix(guest.Host, "/")
	})
	seed(t, guest, "guest", "installer", "", false)
	seed(t, guest, "guest-status", "installer", "", true)
	seed(t, mgmt, "management", "control-plane-operator", hcpNS, false)
	seed(t, mgmt, "management-status", "router", hcpNS, true)
	mgmtCS, _ := clients(t, mgmt)
	guestCS, guestDyn := clients(t, guest)

	// What HyperShift provides the OAuth server in the HCP namespace: its serving
	// certificate (the example aliases CAO's to it). The issuer is HyperShift's `oauth` Route.
	route := readRouteHost(t, mgmt, hcpNS, "oauth")
	if _, err := mgmtCS.CoreV1().Secrets(hcpNS).Create(t.Context(), servingCertSecret(t, hcpNS, "oauth-server-crt", route), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// What HyperShift's hosted-cluster-config-operator creates on the guest: the OAuth
	// clients the command line logs in with (CAO's controller for them does not run offline).
	createChallengingClient(t, guestDyn, route)

	// What the guest's ingress operator publishes: the router certificates for the apps
	// domain, which CAO copies for its OAuth server.
	if _, err := guestCS.CoreV1().Secrets("openshift-config-managed").Create(t.Context(), routerCerts(t, appsDomain), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	kubeDir := t.TempDir()
	if err := env.WriteKubeconfigs(kubeDir); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, append([]string{"--config", cfgFile, "--leader-elect=false", "-v", "1"}, hostedKubeconfigFlags(kubeDir)...)...)
	const op, deployment = "cluster-authentication-operator", "openshift-authentication--oauth-openshift"
	eventuallyWithin(t, "the oauth-openshift Deployment in "+hcpNS, 3*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(ctx, deployment, metav1.GetOptions{})
		return err == nil, err
	})
	settle(t, p, op)
	// The pod runs as a kubelet would run it under HyperShift's opinions: a read-only root
	// filesystem (podrun honours it), the audit log on the pod's own scratch volume where the
	// standalone one had a host directory, printed by the audit-logs sidecar.
	placed, err := mgmtCS.AppsV1().Deployments(hcpNS).Get(t.Context(), deployment, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	requireReadOnlyRootWithAuditLogs(t, placed.Spec.Template.Spec)

	placedOAuthServer{
		env: env, cluster: cluster.Guest, placedOn: mgmt,
		namespace: hcpNS, deployment: deployment, cliconfig: "openshift-authentication--v4-0-config-system-cliconfig",
		issuer:   "https://" + route,
		metadata: types.NamespacedName{Namespace: hcpNS, Name: "openshift-config-managed--oauth-openshift"},
		identity: "system:serviceaccount:openshift-authentication:oauth-openshift",
		binary:   oauthServer,
	}.loginAndLogout(t)
}

// TestLoginStandalone is TestLoginHosted on one standalone cluster serving the OAuth APIs:
// the real cluster-authentication-operator through topolayer run, its OAuth server placed in
// openshift-authentication and run from what the cluster holds (its in-cluster
// configuration: its service account's token, as a kubelet mounts it), the same login.
// The test plays the cluster's other operators: the router admits the operator's Route, the
// service CA operator issues the serving certificate its Service asks for, the ingress
// operator publishes the router certificates.
func TestLoginStandalone(t *testing.T) {
	cao := caoBinary(t)
	oauthServer := operatorBinary(t, "oauth-server")
	env := oauthEnvironment(t, config.Standalone)
	rc := env.Config(cluster.Single)
	hostedCfg, err := config.Load(filepath.Join("..", "examples", "cluster-authentication-operator", "hosted.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfgFile := configWith(t, filepath.Join("cluster-authentication-operator", "standalone.yaml"), func(cfg *config.TopologyConfig) {
		cfg.Operators[0].Command = []string{cao}
		cfg.Operators[0].Resync = loginResync
		cfg.Manager.Namespace = newNamespace(t, rc)
		// The dev environment's OAuth API server stands in for the one CAO deploys (no
		// kubelet runs that one here): CAO's controllers for it are left out, as the hosted
		// example leaves them to HyperShift. Run, they would point the APIServices at a
		// Service nothing serves.
		cfg.Operators[0].Controllers = hostedCfg.Operators[0].Controllers
	})
	seed(t, rc, "cluster", "installer", "", false)
	seed(t, rc, "guest-status", "installer", "", true)
	cs, dyn := clients(t, rc)
	const ns, deployment = "openshift-authentication", "oauth-openshift"
	if _, err := cs.CoreV1().Secrets("openshift-config-managed").Create(t.Context(), routerCerts(t, appsDomain), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	route := "oauth-openshift." + appsDomain
	createChallengingClient(t, dyn, route)

	kubeDir := t.TempDir()
	if err := env.WriteKubeconfigs(kubeDir); err != nil {
		t.Fatal(err)
	}
	p := startRun(t, "--config", cfgFile, "--leader-elect=false", "-v", "1", "--kubeconfig", cluster.KubeconfigFile(kubeDir, cluster.Single))
	routesGVR := schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}
	// The router admits the Route the operator writes; the service CA operator issues the
	// certificate its Service names.
	eventuallyWithin(t, "the operator's Route and Service", 3*time.Minute, func(ctx context.Context) (bool, error) {
		if _, err := dyn.Resource(routesGVR).Namespace(ns).Get(ctx, "oauth-openshift", metav1.GetOptions{}); err != nil {
			return false, err
		}
		_, err := cs.CoreV1().Services(ns).Get(ctx, "oauth-openshift", metav1.GetOptions{})
		return err == nil, err
	})
	admitOAuthRoute(t, rc, route)
	svc, err := cs.CoreV1().Services(ns).Get(t.Context(), "oauth-openshift", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	secretName := svc.Annotations["service.alpha.openshift.io/serving-cert-secret-name"]
	if secretName == "" {
		t.Fatalf("the oauth-openshift Service asks for no serving certificate: %v", svc.Annotations)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(t.Context(), servingCertSecret(t, ns, secretName, "oauth-openshift."+ns+".svc"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, "the oauth-openshift Deployment", 3*time.Minute, func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().Deployments(ns).Get(ctx, deployment, metav1.GetOptions{})
		return err == nil, err
	})
	settle(t, p, "cluster-authentication-operator")

	host, port, err := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(rc.Host, "https://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	placedOAuthServer{
		env: env, cluster: cluster.Single, placedOn: rc,
		namespace: ns, deployment: deployment, cliconfig: "v4-0-config-system-cliconfig",
		inCluster: &podrun.InCluster{Host: host, Port: port, CA: rc.CAData},
		issuer:    "https://" + route,
		metadata:  types.NamespacedName{Namespace: "openshift-config-managed", Name: "oauth-openshift"},
		identity:  "system:serviceaccount:openshift-authentication:oauth-openshift",
		binary:    oauthServer,
	}.loginAndLogout(t)
}

// requireReadOnlyRootWithAuditLogs holds that the OAuth server's container has a read-only
// root filesystem, that the volume of its audit log is an emptyDir, and that the audit-logs
// sidecar mounts that volume where the server writes.
func requireReadOnlyRootWithAuditLogs(t *testing.T, spec corev1.PodSpec) {
	t.Helper()
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	mounts := map[string]map[string]string{} // container -> volume -> mount path
	for _, c := range spec.Containers {
		mounts[c.Name] = map[string]string{}
		for _, m := range c.VolumeMounts {
			mounts[c.Name][m.Name] = m.MountPath
		}
		if c.Name == "oauth-openshift" && (c.SecurityContext == nil || c.SecurityContext.ReadOnlyRootFilesystem == nil || !*c.SecurityContext.ReadOnlyRootFilesystem) {
			t.Errorf("container oauth-openshift: the root filesystem is not read-only: %+v", c.SecurityContext)
		}
	}
	at, ok := mounts["oauth-openshift"]["audit-dir"]
	if v := volumes["audit-dir"]; !ok || v.EmptyDir == nil || v.HostPath != nil {
		t.Errorf("the audit log's volume audit-dir: %+v, mounted at %q", v.VolumeSource, at)
	}
	if got := mounts["audit-logs"]["audit-dir"]; got != at {
		t.Errorf("the audit-logs sidecar mounts audit-dir at %q, the server at %q", got, at)
	}
}

// placedOAuthServer is an OAuth server topolayer placed, and the cluster its users log in to.
type placedOAuthServer struct {
	env *cluster.Environment
	// cluster is where users log in (the guest, or the standalone cluster): where the
	// identity provider is configured and the OAuth clients and tokens live; the server
	// reads them there as identity.
	cluster  string
	identity string
	// placedOn is the cluster holding the server's Deployment, ConfigMaps and Secrets, in
	// namespace; cliconfig is its OsinServerConfig's ConfigMap.
	placedOn                         *rest.Config
	namespace, deployment, cliconfig string
	// inCluster, for a server without a kubeconfig of its own, is the API server its
	// in-cluster configuration reaches.
	inCluster *podrun.InCluster
	issuer    string // the URL of the Route it is published through
	// metadata is the ConfigMap (on placedOn) where the operator published its OAuth
	// metadata for the API server.
	metadata types.NamespacedName
	binary   string // the oauth-server executable
}

// loginAndLogout adds an htpasswd identity provider as a user does (its Secret in
// openshift-config, the provider in OAuth cluster), runs the placed server as a kubelet
// would (each new revision of its Deployment replacing the process), logs in through it with
// the challenging client, asks the cluster who the token is, checks that a wrong password is
// refused and that the server reached only that cluster, as its identity, then removes the
// provider and waits until the login is refused.
func (s placedOAuthServer) loginAndLogout(t *testing.T) {
	t.Helper()
	placedCS, _ := clients(t, s.placedOn)
	userCfg := s.env.Config(s.cluster)
	userCS, userDyn := clients(t, userCfg)

	// The user adds an htpasswd identity provider on the guest.
	const user, password = "developer", "s3cret-passw0rd"
	added := time.Now()
	if _, err := userCS.CoreV1().Secrets("openshift-config").Create(t.Context(), &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "htpass-secret", Namespace: "openshift-config"},
		Data:       map[string][]byte{"htpasswd": htpasswdLine(t, user, password)},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = userCS.CoreV1().Secrets("openshift-config").Delete(context.Background(), "htpass-secret", metav1.DeleteOptions{})
	})
	oauthGVR := schema.GroupVersionResource{Group: "config.openshift.io", Version: "v1", Resource: "oauths"}
	idp := []byte(`{"spec":{"identityProviders":[{"name":"developers","mappingMethod":"claim","type":"HTPasswd","htpasswd":{"fileData":{"name":"htpass-secret"}}}]}}`)
	if _, err := userDyn.Resource(oauthGVR).Patch(t.Context(), "cluster", types.MergePatchType, idp, metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}

	// The placed server, as a kubelet runs it: each new revision of the Deployment replaces
	// the running process.
	ctx, stop := context.WithCancel(t.Context())
	out := &syncbuf.Buffer{}
	follower := podrun.Follow(ctx, podrun.Options{
		Client:    placedCS,
		Namespace: s.namespace,
		Name:      "oauth-openshift-0",
		Container: "oauth-openshift",
		Binaries:  map[string]string{"oauth-server": s.binary},
		InCluster: s.inCluster,
		Stdout:    out,
		Stderr:    out,
	}, func(ctx context.Context) (*appsv1.Deployment, error) {
		return placedCS.AppsV1().Deployments(s.namespace).Get(ctx, s.deployment, metav1.GetOptions{})
	}, time.Second)
	t.Cleanup(func() {
		stop()
		<-follower.Done()
		if t.Failed() {
			t.Logf("the OAuth server's output:\n%s", lastLinesOf(out.String(), 40))
		}
	})

	cli := readOAuthServerConfig(t, placedCS, s.namespace, s.cliconfig)
	_, port, _ := net.SplitHostPort(cli.ServingInfo.BindAddress)
	addr := net.JoinHostPort("127.0.0.1", port)
	issuer := cli.OAuthConfig.MasterPublicURL
	if issuer != s.issuer {
		t.Errorf("the OAuth server's issuer is %s, want its Route's %s", issuer, s.issuer)
	}
	var token string
	var last error
	if err := poll(t.Context(), time.Second, 3*time.Minute, func(ctx context.Context) (bool, error) {
		tok, status, err := login(ctx, addr, issuer, user, password)
		if err != nil || status != http.StatusFound {
			starts, startErr := follower.Starts()
			last = errors.Join(err, fmt.Errorf("status %d; the server started %d times, last start: %v", status, starts, startErr))
			return false, nil
		}
		token = tok
		return true, nil
	}); err != nil {
		t.Fatalf("a login as %s through the placed OAuth server: %v; last attempt: %v", user, err, last)
	}
	t.Logf("identity provider added → first successful login: %s", time.Since(added).Round(100*time.Millisecond))

	// It serves its health endpoint, and the OAuth metadata the operator published for the
	// API server to serve (OpenShift's kube-apiserver serves it, not the OAuth server)
	// names its Route as the issuer and its authorize endpoint there.
	if err := getJSON(t.Context(), addr, issuer+"/healthz", nil); err != nil {
		t.Errorf("health: %v", err)
	}
	if cm, err := placedCS.CoreV1().ConfigMaps(s.metadata.Namespace).Get(t.Context(), s.metadata.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the published OAuth metadata: %v", err)
	} else {
		var metadata struct {
			Issuer                string `json:"issuer"`
			AuthorizationEndpoint string `json:"authorization_endpoint"`
		}
		if err := json.Unmarshal([]byte(cm.Data["oauthMetadata"]), &metadata); err != nil {
			t.Errorf("the published OAuth metadata %s: %v", s.metadata, err)
		} else if metadata.Issuer != s.issuer || metadata.AuthorizationEndpoint != s.issuer+"/oauth/authorize" {
			t.Errorf("the published OAuth metadata %s: issuer %s, authorization endpoint %s; want the Route's %s", s.metadata, metadata.Issuer, metadata.AuthorizationEndpoint, s.issuer)
		}
	}
	if got, err := whoAmI(t, userCfg, token); err != nil || got != user {
		t.Errorf("%s says the token is %q (%v), want %s", s.cluster, got, err, user)
	}
	if _, status, err := login(t.Context(), addr, issuer, user, "wrong"); err != nil || status != http.StatusUnauthorized {
		t.Errorf("a wrong password: status %d (%v), want 401", status, err)
	}

	// Who the OAuth server was: its identity on the cluster users log in to, and nobody on
	// any other (it has no credentials there).
	for _, name := range s.env.Clusters() {
		users := auditUsers(t, s.env.AuditLog(name), "oauth-server")
		t.Logf("the OAuth server's requests on %s, by user: %v", name, users)
		switch {
		case name == s.cluster && (len(users) != 1 || users[s.identity] == 0):
			t.Errorf("the OAuth server's requests on %s came from %v, want only %s", name, users, s.identity)
		case name != s.cluster && len(users) != 0:
			t.Errorf("the OAuth server sent requests to %s, want none: %v", name, users)
		}
	}

	// The user removes the provider: the login stops working.
	removed := time.Now()
	if _, err := userDyn.Resource(oauthGVR).Patch(t.Context(), "cluster", types.MergePatchType, []byte(`{"spec":{"identityProviders":null}}`), metav1.PatchOptions{FieldManager: "cluster-admin"}); err != nil {
		t.Fatal(err)
	}
	eventuallyWithin(t, "the login refused once the provider is removed", time.Minute, func(ctx context.Context) (bool, error) {
		_, status, err := login(ctx, addr, issuer, user, password)
		return err == nil && status != http.StatusFound, nil
	})
	t.Logf("identity provider removed → login refused: %s", time.Since(removed).Round(100*time.Millisecond))
}

// readRouteHost returns the host of a Route.
func readRouteHost(t *testing.T, cfg *rest.Config, namespace, name string) string {
	t.Helper()
	_, dyn := clients(t, cfg)
	r, err := dyn.Resource(schema.GroupVersionResource{Group: "route.openshift.io", Version: "v1", Resource: "routes"}).Namespace(namespace).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ := unstructured.NestedString(r.Object, "spec", "host")
	if host == "" {
		t.Fatalf("route %s/%s has no host", namespace, name)
	}
	return host
}

// lastLinesOf returns the last n lines of s.
func lastLinesOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
