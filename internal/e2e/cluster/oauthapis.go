package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// The OAuth APIs as OpenShift serves them: oauth.openshift.io (clients, tokens, token
// reviews) and user.openshift.io (users, identities, groups), by the OAuth API server, an
// aggregated API server in OAuthAPIServerNamespace behind its Service OAuthAPIServerService.
const (
	OAuthAPIServerNamespace = "openshift-oauth-apiserver"
	OAuthAPIServerService   = "api"
)

// oauthGroupVersions are the group versions the OAuth API server serves.
var oauthGroupVersions = []string{"oauth.openshift.io/v1", "user.openshift.io/v1"}

// apiAudience is the audience of the API server's tokens, as OpenShift names it.
const apiAudience = "https://kubernetes.default.svc"

// frontProxyUser is the common name of the aggregator's client certificate, the only one the
// request-header authenticators accept.
const frontProxyUser = "front-proxy-client"

// oauthAPIs is the OAuth API server of one cluster of an Environment: what its API server is
// started with, and the process once it runs.
type oauthAPIs struct {
	dir     string // certificates, kubeconfigs, the audit log
	port    int
	ca      *tinyCA
	serving keyPair
	cmd     *exec.Cmd
	exited  chan struct{}
}

// servesOAuthAPIs reports whether the named cluster of the environment serves the OAuth
// APIs: the cluster users log in to (the guest, or the standalone cluster), when
// Environment.OAuthAPIServer names the binary.
func (e *Environment) servesOAuthAPIs(name string) bool {
	return e.OAuthAPIServer != "" && (name == Guest || name == Single)
}

// AuditLog returns the path of the named cluster's audit log (every request, at the
// Metadata level: who asked what), which every cluster of an environment with the OAuth
// APIs keeps; "" for a cluster that keeps none.
func (e *Environment) AuditLog(name string) string {
	for _, s := range e.servers {
		if s.name == name && s.auditDir != "" {
			return filepath.Join(s.auditDir, "audit.log")
		}
	}
	return ""
}

// prepareAudit makes the API server log every request at the Metadata level to
// dir/audit.log.
func (s *server) prepareAudit(apiServer *envtest.APIServer, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte("apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n"), 0o600); err != nil {
		return err
	}
	args := apiServer.Configure()
	args.Set("audit-policy-file", policy)
	args.Set("audit-log-path", filepath.Join(dir, "audit.log"))
	args.Set("audit-log-mode", "blocking")
	s.auditDir = dir
	return nil
}

// prepareOAuthAPIs configures the API server to aggregate the OAuth APIs and to
// authenticate bearer tokens through the OAuth API server's token reviews, as OpenShift's
// kube-apiserver does: the front proxy's CA and client certificate, the token webhook's
// kubeconfig. The OAuth API server's port is chosen here, before the API
// server that will call it starts.
func (s *server) prepareOAuthAPIs(apiServer *envtest.APIServer, dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ca, err := newTinyCA("topolayer-devenv-oauth-apis")
	if err != nil {
		return err
	}
	port, err := freePort()
	if err != nil {
		return err
	}
	o := &oauthAPIs{dir: dir, port: port, ca: ca}
	if o.serving, err = ca.issue("oauth-apiserver", nil, "127.0.0.1", "localhost",
		OAuthAPIServerService+"."+OAuthAPIServerNamespace+".svc"); err != nil {
		return err
	}
	caFile := filepath.Join(dir, "oauth-apis-ca.crt")
	if err := os.WriteFile(caFile, ca.pem, 0o600); err != nil {
		return err
	}
	proxy, err := ca.issue(frontProxyUser, nil)
	if err != nil {
		return err
	}
	proxyCert, proxyKey, err := proxy.write(dir, "front-proxy-client")
	if err != nil {
		return err
	}
	// The API server presents this certificate to the token review endpoint; the OAuth API
	// server asks the API server (delegated authorization) whether its user may create token
	// reviews, as a system:masters member it may.
	webhook, err := ca.issue("system:kube-apiserver-token-webhook", []string{"system:masters"})
	if err != nil {
		return err
	}
	webhookCert, webhookKey, err := webhook.write(dir, "token-webhook")
	if err != nil {
		return err
	}
	webhookConfig := clientcmdConfig("oauth-apiserver", fmt.Sprintf("https://127.0.0.1:%d/apis/oauth.openshift.io/v1/tokenreviews", port), caFile, webhookCert, webhookKey)
	webhookFile := filepath.Join(dir, "token-webhook.kubeconfig")
	if err := clientcmd.WriteToFile(*webhookConfig, webhookFile); err != nil {
		return err
	}
	args := apiServer.Configure()
	for flag, value := range map[string]string{
		"requestheader-client-ca-file":             caFile,
		"requestheader-allowed-names":              frontProxyUser,
		"requestheader-username-headers":           "X-Remote-User",
		"requestheader-group-headers":              "X-Remote-Group",
		"requestheader-extra-headers-prefix":       "X-Remote-Extra-",
		"proxy-client-cert-file":                   proxyCert,
		"proxy-client-key-file":                    proxyKey,
		"authentication-token-webhook-config-file": webhookFile,
		"authentication-token-webhook-version":     "v1",
		// A revoked token stops working within seconds, not the default two minutes.
		"authentication-token-webhook-cache-ttl": "5s",
		// Token reviews carry the API server's audiences; the OAuth API server accepts its
		// tokens for the same (OpenShift's kube-apiserver and oauth-apiserver both name it).
		"api-audiences": apiAudience,
	} {
		args.Set(flag, value)
	}
	s.oauth = o
	return nil
}

// startOAuthAPIs starts the OAuth API server against the cluster's etcd (its own prefix)
// and API server, registers its Service and APIServices, and waits until the API server
// serves both groups.
func (e *Environment) startOAuthAPIs(ctx context.Context, s *server, timeout time.Duration) error {
	o := s.oauth
	kc, err := kubeconfigFromREST(s.name, s.cfg)
	if err != nil {
		return err
	}
	kubeconfig := filepath.Join(o.dir, "oauth-apiserver.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, kubeconfig); err != nil {
		return err
	}
	servingCert, servingKey, err := o.serving.write(o.dir, "oauth-apiserver-serving")
	if err != nil {
		return err
	}
	etcd := s.env.ControlPlane.Etcd.URL
	if etcd == nil {
		return errors.New("oauth-apiserver: the etcd URL is unknown")
	}
	cmd := exec.Command(e.OAuthAPIServer, "start",
		"--etcd-servers="+etcd.String(),
		"--etcd-prefix=openshift.io",
		"--kubeconfig="+kubeconfig,
		"--authentication-kubeconfig="+kubeconfig,
		"--authorization-kubeconfig="+kubeconfig,
		"--secure-port="+strconv.Itoa(o.port),
		"--bind-address=127.0.0.1",
		"--tls-cert-file="+servingCert,
		"--tls-private-key-file="+servingKey,
		"--client-ca-file="+filepath.Join(o.dir, "oauth-apis-ca.crt"),
		"--cert-dir="+o.dir,
		"--api-audiences="+apiAudience,
	)
	cmd.SysProcAttr = detached()
	if s.out != nil {
		cmd.Stdout, cmd.Stderr = s.out, s.out
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("oauth-apiserver %s: %w", e.OAuthAPIServer, err)
	}
	o.cmd, o.exited = cmd, make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(o.exited)
	}()

	c, err := client.New(s.cfg, client.Options{})
	if err != nil {
		return err
	}
	objs := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: OAuthAPIServerNamespace}},
		// The aggregator resolves an ExternalName Service to its name and the APIService's
		// port: the OAuth API server on loopback, without a kube-proxy.
		&corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Name: OAuthAPIServerService, Namespace: OAuthAPIServerNamespace},
			Spec: corev1.ServiceSpec{
				Type: corev1.ServiceTypeExternalName, ExternalName: "localhost",
				Ports: []corev1.ServicePort{{Name: "https", Port: int32(o.port)}},
			},
		},
	}
	for _, gv := range oauthGroupVersions {
		group, version, _ := strings.Cut(gv, "/")
		objs = append(objs, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiregistration.k8s.io/v1",
			"kind":       "APIService",
			"metadata":   map[string]any{"name": version + "." + group},
			"spec": map[string]any{
				"group": group, "version": version,
				"service":              map[string]any{"namespace": OAuthAPIServerNamespace, "name": OAuthAPIServerService, "port": int64(o.port)},
				"caBundle":             o.ca.pem,
				"groupPriorityMinimum": int64(9900),
				"versionPriority":      int64(15),
			},
		}})
	}
	for _, obj := range objs {
		if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("oauth-apiserver: create %T %s: %w", obj, obj.GetName(), err)
		}
	}
	dc, err := discovery.NewDiscoveryClientForConfig(s.cfg)
	if err != nil {
		return err
	}
	var last error
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-o.exited:
			return false, errors.New("oauth-apiserver exited")
		default:
		}
		for _, gv := range oauthGroupVersions {
			if _, last = dc.ServerResourcesForGroupVersion(gv); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("oauth-apiserver: the OAuth APIs not served: %w (last: %v)", err, last)
	}
	return nil
}

// stopOAuthAPIs stops the OAuth API server, if it runs, and waits for it to exit.
func (o *oauthAPIs) stop() {
	if o == nil || o.cmd == nil || o.cmd.Process == nil {
		return
	}
	_ = kill(-o.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-o.exited:
	case <-time.After(10 * time.Second):
		_ = kill(-o.cmd.Process.Pid, syscall.SIGKILL)
		<-o.exited
	}
}

// freePort returns a TCP port on loopback that nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// clientcmdConfig returns a kubeconfig for one server, trusted by the CA in caFile, as the
// user of the client certificate in certFile and keyFile.
func clientcmdConfig(name, server, caFile, certFile, keyFile string) *clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthority: caFile}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificate: certFile, ClientKey: keyFile}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	return kc
}
