package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/hosted"
	samplecrds "github.com/topolayer/topolayer/internal/samples/crds"
	"github.com/topolayer/topolayer/routing"
	"github.com/topolayer/topolayer/topology"
)

// The names of the API servers of an Environment, as Config, Clusters and WriteKubeconfigs
// use them: the clusters' names in plans and routing rules (package routing names them).
const (
	// Management is the hosted topology's management cluster, which holds the HCP namespace.
	Management = routing.ClusterManagement
	// Guest is the hosted topology's guest cluster.
	Guest = routing.ClusterGuest
	// Single is the standalone topology's one cluster.
	Single = routing.ClusterStandalone
)

// DefaultHostedControlPlane names the hosted control plane when the configuration does not:
// the values of examples/hosted.yaml.
var DefaultHostedControlPlane = config.HostedTopology{Namespace: "clusters-example", HostedControlPlane: "example"}

// ReleaseImage is the releaseImage of the HostedControlPlane object an Environment creates.
// Nothing pulls it.
const ReleaseImage = "quay.io/openshift-release-dev/ocp-release:4.20.0-multi"

// LabelHCPNamespace marks the HCP namespace, with the value "true", as HyperShift does.
const LabelHCPNamespace = "hypershift.openshift.io/hosted-control-plane"

// Environment is a set of local API servers (kube-apiserver and etcd, started by
// controller-runtime's envtest) in one topology:
//
//   - config.Standalone: one server, Single ("cluster"), serving the openshift/api payload CRDs
//     and the sample operators' CRDs (sdk/samples/crds);
//   - config.Hosted: two servers, Management and Guest ("management" and "guest"). The guest
//     serves the payload and sample CRDs; the management server serves the HostedControlPlane CRD, the
//     shadows of their cluster-scoped CRDs and of BuiltinShadows, and holds the HCP
//     namespace, its pull secret and the HostedControlPlane object.
//
// Both hold what Installed names, as an OpenShift installation would.
//
// Every CRD is established before Start returns. The zero value, apart from the fields
// below, is ready to Start; an Environment starts once.
type Environment struct {
	// Topology is config.Standalone or config.Hosted. Default: TopologyConfig's topology type
	// when it is set, otherwise config.Hosted.
	Topology config.TopologyType
	// TopologyConfig names the hosted control plane (TopologyConfig.Topology.Hosted).
	// Default, and when it names none: DefaultHostedControlPlane.
	TopologyConfig *config.TopologyConfig
	// AssetsDir holds the kube-apiserver and etcd binaries. Default: AssetsDir(ctx, Progress).
	AssetsDir string
	// DataDir, when set, holds each server's etcd data and certificates, in
	// DataDir/<cluster>/{etcd,apiserver}; Stop leaves them, for the caller to remove. Default:
	// temporary directories that Stop removes.
	DataDir string
	// Output receives the API servers' and etcd's own output, each line prefixed with the
	// cluster name. Default: discarded.
	Output io.Writer
	// Progress receives the environment's progress: the assets build, servers started,
	// CRDs established, with durations. Default: discarded.
	Progress io.Writer
	// StartTimeout bounds the start of each kube-apiserver and etcd process, and separately
	// the wait for the CRDs to be served. Default: 2 minutes.
	StartTimeout time.Duration
	// OAuthAPIServer, when set, is the path of the OAuth API server binary
	// (openshift/oauth-apiserver), and the cluster users log in to (the guest, or the
	// standalone cluster) serves the OAuth APIs as OpenShift's does: its API server
	// aggregates oauth.openshift.io and user.openshift.io served by that binary (with its
	// own etcd prefix) and authenticates bearer tokens through its token reviews; every
	// cluster keeps an audit log (AuditLog). Default: none, and the environment starts as
	// fast as without.
	OAuthAPIServer string

	started  bool
	servers  []*server
	outputMu sync.Mutex
}

// server is one API server of an Environment.
type server struct {
	name string
	env  *envtest.Environment
	cfg  *rest.Config
	out  *prefixWriter
	// oauth is the OAuth API server beside this one (Environment.OAuthAPIServer), or nil.
	oauth *oauthAPIs
	// auditDir holds the audit log, when the server keeps one.
	auditDir string
	// tempDir is a directory of the server's that Stop removes, or "".
	tempDir string
}

// placement returns the topology to start: Topology, else TopologyConfig's, else Hosted;
// a hosted one without a HostedControlPlane gets DefaultHostedControlPlane.
func (e *Environment) placement() (*topology.Topology, error) {
	var cfg config.TopologyConfig
	if e.TopologyConfig != nil {
		cfg = *e.TopologyConfig
	}
	cfg.Topology.Type = config.ResolveTopologyType(string(e.Topology), &cfg, config.Hosted)
	if cfg.Topology.Hosted == nil {
		hcp := DefaultHostedControlPlane
		cfg.Topology.Hosted = &hcp
	}
	topo, err := topology.New(&cfg)
	if err != nil {
		return nil, fmt.Errorf("environment: %w", err)
	}
	return topo, nil
}

// Clusters returns the names of the environment's API servers: Management and Guest for a
// hosted environment, Single for a standalone one; none for a topology it cannot start.
func (e *Environment) Clusters() []string {
	topo, err := e.placement()
	if err != nil {
		return nil
	}
	return topo.Clusters()
}

// HostedControlPlane returns the HCP namespace and HostedControlPlane name of a hosted
// environment, and the zero value for a standalone one.
func (e *Environment) HostedControlPlane() config.HostedTopology {
	topo, err := e.placement()
	if err != nil {
		return config.HostedTopology{}
	}
	if hcp, ok := topo.HostedControlPlane(); ok {
		return config.HostedTopology{Namespace: hcp.Namespace, HostedControlPlane: hcp.Name}
	}
	return config.HostedTopology{}
}

// Config returns a copy of the admin (system:masters) client configuration of the named
// cluster, or nil if the environment is not running or has no such cluster.
func (e *Environment) Config(name string) *rest.Config {
	for _, s := range e.servers {
		if s.name == name && s.cfg != nil {
			return rest.CopyConfig(s.cfg)
		}
	}
	return nil
}

// Start starts the API servers, concurrently, installs their CRDs and waits until every CRD
// is served, and, for a hosted environment, creates the HCP namespace, its pull secret and
// the HostedControlPlane object. On error, whatever was started is stopped. ctx bounds the
// assets build and the objects' creation; a server that is starting finishes starting (or
// times out, see StartTimeout) before Start returns.
func (e *Environment) Start(ctx context.Context) (err error) {
	if e.started {
		return errors.New("environment: already started")
	}
	topo, err := e.placement()
	if err != nil {
		return err
	}
	e.started = true
	start := time.Now()

	assets := e.AssetsDir
	if assets == "" {
		if assets, err = AssetsDir(ctx, e.Progress); err != nil {
			return err
		}
	} else if err := checkAssets(assets); err != nil {
		return fmt.Errorf("environment: assets %s: %w", assets, err)
	}

	payload, err := PayloadCRDs()
	if err != nil {
		return err
	}
	samples, err := samplecrds.CRDs()
	if err != nil {
		return fmt.Errorf("environment: the sample operators' CRDs: %w", err)
	}
	payload = append(payload, samples...)
	// A cluster confined to the HCP namespace serves shadow CRDs of the cluster-scoped kinds.
	crds := map[string][]*apiextensionsv1.CustomResourceDefinition{}
	for _, name := range topo.Clusters() {
		crds[name] = payload
		if topo.Bound(name) != "" {
			if crds[name], err = ManagementCRDs(payload); err != nil {
				return err
			}
		}
		e.servers = append(e.servers, &server{name: name})
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, e.Stop())
		}
	}()

	errs := make([]error, len(e.servers))
	var wg sync.WaitGroup
	for i, s := range e.servers {
		wg.Go(func() {
			errs[i] = e.startServer(s, assets, crds[s.name])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("environment: %w", err)
	}

	if hcp, ok := topo.HostedControlPlane(); ok {
		if err := createHostedControlPlane(ctx, e.Config(topo.Home()), config.HostedTopology{Namespace: hcp.Namespace, HostedControlPlane: hcp.Name}, e.Config(Guest).CAData); err != nil {
			return fmt.Errorf("%s: %w", topo.Home(), err)
		}
	}
	if err := e.install(ctx, topo); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	e.progressf("%s environment ready in %s", topo.Name(), time.Since(start).Round(time.Millisecond))
	return nil
}

// startServer starts one API server and installs crds (deep copies: envtest modifies them).
func (e *Environment) startServer(s *server, assets string, crds []*apiextensionsv1.CustomResourceDefinition) error {
	timeout := e.StartTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	apiServer := &envtest.APIServer{Path: filepath.Join(assets, "kube-apiserver")}
	etcd := &envtest.Etcd{Path: filepath.Join(assets, "etcd")}
	if e.Output != nil {
		s.out = &prefixWriter{mu: &e.outputMu, w: e.Output, prefix: "[" + s.name + "] "}
		apiServer.Out, apiServer.Err = s.out, s.out
		etcd.Out, etcd.Err = s.out, s.out
	}
	if e.DataDir != "" {
		apiServer.CertDir = filepath.Join(e.DataDir, s.name, "apiserver")
		etcd.DataDir = filepath.Join(e.DataDir, s.name, "etcd")
		for _, dir := range []string{apiServer.CertDir, etcd.DataDir} {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
	}
	if e.OAuthAPIServer != "" {
		dir := filepath.Join(e.DataDir, s.name, "oauth-apis")
		if e.DataDir == "" {
			var err error
			if dir, err = os.MkdirTemp("", "topolayer-oauth-apis-"); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			s.tempDir = dir
		}
		if err := s.prepareAudit(apiServer, dir); err != nil {
			return fmt.Errorf("%s: the audit log: %w", s.name, err)
		}
		if e.servesOAuthAPIs(s.name) {
			if err := s.prepareOAuthAPIs(apiServer, dir); err != nil {
				return fmt.Errorf("%s: the OAuth APIs: %w", s.name, err)
			}
		}
	}
	copies := make([]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for i, crd := range crds {
		copies[i] = crd.DeepCopy()
	}
	useExisting := false
	s.env = &envtest.Environment{
		ControlPlane:             envtest.ControlPlane{APIServer: apiServer, Etcd: etcd},
		UseExistingCluster:       &useExisting,
		ControlPlaneStartTimeout: timeout,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	start := time.Now()
	cfg, err := s.env.Start()
	if err != nil {
		return fmt.Errorf("%s: start the API server: %w", s.name, err)
	}
	s.cfg = cfg
	started := time.Now()
	e.progressf("%s: API server %s started in %s", s.name, cfg.Host, started.Sub(start).Round(time.Millisecond))

	// envtest.InstallCRDs creates the CRDs and waits until discovery serves every one.
	if _, err := envtest.InstallCRDs(cfg, envtest.CRDInstallOptions{
		CRDs:         copies,
		MaxTime:      timeout,
		PollInterval: 200 * time.Millisecond,
	}); err != nil {
		return fmt.Errorf("%s: install CRDs: %w", s.name, err)
	}
	e.progressf("%s: %d CRDs served in %s", s.name, len(crds), time.Since(started).Round(time.Millisecond))
	if s.oauth != nil {
		oauthStart := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if err := e.startOAuthAPIs(ctx, s, timeout); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		e.progressf("%s: the OAuth APIs served in %s", s.name, time.Since(oauthStart).Round(time.Millisecond))
	}
	return nil
}

// Stop stops every API server that was started, concurrently, and waits for their
// processes to exit. It is safe to call more than once.
func (e *Environment) Stop() error {
	errs := make([]error, len(e.servers))
	var wg sync.WaitGroup
	for i, s := range e.servers {
		if s.env == nil {
			continue
		}
		wg.Go(func() {
			s.oauth.stop()
			if err := s.env.Stop(); err != nil {
				errs[i] = fmt.Errorf("%s: stop the API server: %w", s.name, err)
			}
			if s.out != nil {
				s.out.flush()
			}
		})
	}
	wg.Wait()
	for _, s := range e.servers {
		if s.tempDir != "" {
			errs = append(errs, os.RemoveAll(s.tempDir))
		}
		s.env, s.cfg, s.oauth, s.tempDir = nil, nil, nil, ""
	}
	return errors.Join(errs...)
}

// RootCAConfigMap is the ConfigMap of an HCP namespace holding the guest API server's CA
// (key ca.crt), as HyperShift's root-ca: where guest kubeconfigs find their CA by default.
const RootCAConfigMap = config.DefaultGuestCAConfigMap

// RootCA returns the root-ca ConfigMap of an HCP namespace for a guest CA bundle.
func RootCA(namespace string, guestCA []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: RootCAConfigMap, Namespace: namespace},
		Data:       map[string]string{config.DefaultGuestCAKey: string(guestCA)},
	}
}

// OAuthMasterCABundle is the ConfigMap of an HCP namespace holding, under ca.crt, the CA
// bundle HyperShift's OAuth server trusts as its master CA; HyperShift's
// control-plane-operator builds it from the root CA, as Start does from the guest server's CA.
const OAuthMasterCABundle = "oauth-master-ca-bundle"

// MasterCABundle returns the oauth-master-ca-bundle ConfigMap of an HCP namespace for a CA
// bundle.
func MasterCABundle(namespace string, ca []byte) *corev1.ConfigMap {
	cm := RootCA(namespace, ca)
	cm.Name = OAuthMasterCABundle
	return cm
}

// CreateHostedControlPlane creates one more hosted control plane on the management server of
// a started hosted environment, as Start creates its own: the HCP namespace, its pull secret,
// its root-ca and oauth-master-ca-bundle ConfigMaps (the guest server's CA) and the
// HostedControlPlane object.
func (e *Environment) CreateHostedControlPlane(ctx context.Context, hcp config.HostedTopology) error {
	return createHostedControlPlane(ctx, e.Config(Management), hcp, e.Config(Guest).CAData)
}

// createHostedControlPlane creates the HCP namespace, its pull secret, its root-ca and
// oauth-master-ca-bundle ConfigMaps (the guest's CA) and the HostedControlPlane object on the
// management server.
func createHostedControlPlane(ctx context.Context, cfg *rest.Config, hcp config.HostedTopology, guestCA []byte) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		Name:   hcp.Namespace,
		Labels: map[string]string{LabelHCPNamespace: "true"},
	}}
	pullSecret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: hosted.PullSecretName, Namespace: hcp.Namespace},
		Type:       corev1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{}}`)},
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{
			"releaseImage":  ReleaseImage,
			"pullSecret":    map[string]any{"name": hosted.PullSecretName},
			"configuration": map[string]any{},
		},
	}}
	obj.SetGroupVersionKind(hosted.HostedControlPlaneGVK())
	obj.SetNamespace(hcp.Namespace)
	obj.SetName(hcp.HostedControlPlane)
	for _, o := range []struct {
		resource string
		obj      client.Object
	}{{"namespace", ns}, {"secret", pullSecret}, {"configmap", RootCA(hcp.Namespace, guestCA)}, {"configmap", MasterCABundle(hcp.Namespace, guestCA)}, {hosted.HostedControlPlaneGVR().GroupResource().String(), obj}} {
		if err := c.Create(ctx, o.obj); err != nil {
			return fmt.Errorf("create %s %s: %w", o.resource, client.ObjectKeyFromObject(o.obj), err)
		}
	}
	return nil
}

// progressf writes one progress line, if anyone listens.
func (e *Environment) progressf(format string, args ...any) {
	if e.Progress == nil {
		return
	}
	e.outputMu.Lock()
	defer e.outputMu.Unlock()
	fmt.Fprintf(e.Progress, "%s "+format+"\n", append([]any{time.Now().Format(time.TimeOnly)}, args...)...)
}

// RestartAPIServer stops the API server of the cluster name (its etcd keeps running),
// waits for down, and starts it again on the same address with the same certificates, so
// that existing clients reconnect. It needs a DataDir, where the certificates survive.
func (e *Environment) RestartAPIServer(name string, down time.Duration) error {
	if e.DataDir == "" {
		return errors.New("restart an API server: the environment needs a DataDir to keep its certificates")
	}
	for _, s := range e.servers {
		if s.name != name || s.env == nil {
			continue
		}
		apiServer := s.env.ControlPlane.APIServer
		if err := apiServer.Stop(); err != nil {
			// envtest kills a server that does not stop within its StopTimeout, and says
			// so in an error: the server is gone all the same, as after a crash.
			if !strings.Contains(err.Error(), "timeout waiting for process") {
				return fmt.Errorf("%s: stop the API server: %w", name, err)
			}
			e.progressf("%s: API server killed: %v", name, err)
		}
		e.progressf("%s: API server stopped for %s", name, down)
		time.Sleep(down)
		if err := apiServer.Start(); err != nil {
			return fmt.Errorf("%s: start the API server again: %w", name, err)
		}
		e.progressf("%s: API server started again", name)
		return nil
	}
	return fmt.Errorf("restart an API server: no running cluster %q", name)
}
