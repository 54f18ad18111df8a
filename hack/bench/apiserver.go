package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/topolayer/topolayer/internal/e2e/promtext"
)

// auditPolicy logs one line per request, when it is received, with its metadata.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [ResponseStarted, ResponseComplete, Panic]
rules:
- level: Metadata
`

// apiServer is one envtest kube-apiserver and etcd with an audit log.
type apiServer struct {
	env        *envtest.Environment
	cfg        *rest.Config
	kubeconfig string
	auditLog   string
}

// startAPIServer starts a kube-apiserver from assets whose audit log and admin kubeconfig
// are in dir.
func startAPIServer(assets, dir string) (*apiServer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("api server: %w", err)
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o644); err != nil {
		return nil, fmt.Errorf("api server: %w", err)
	}
	s := &apiServer{auditLog: filepath.Join(dir, "audit.log"), kubeconfig: filepath.Join(dir, "admin.kubeconfig")}
	api := &envtest.APIServer{Path: filepath.Join(assets, "kube-apiserver")}
	api.Configure().
		Set("audit-policy-file", policy).
		Set("audit-log-path", s.auditLog).
		Set("audit-log-format", "json").
		Set("audit-log-mode", "batch").
		Set("audit-log-batch-max-wait", "1s")
	s.env = &envtest.Environment{ControlPlane: envtest.ControlPlane{APIServer: api, Etcd: &envtest.Etcd{Path: filepath.Join(assets, "etcd")}}}
	cfg, err := s.env.Start()
	if err != nil {
		return nil, fmt.Errorf("start the API server: %w", err)
	}
	s.cfg = cfg
	user, err := s.env.ControlPlane.AddUser(envtest.User{Name: "bench-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return nil, fmt.Errorf("api server: admin user: %w", err)
	}
	kc, err := user.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("api server: kubeconfig: %w", err)
	}
	if err := os.WriteFile(s.kubeconfig, kc, 0o600); err != nil {
		return nil, fmt.Errorf("api server: %w", err)
	}
	return s, nil
}

// stop stops the server.
func (s *apiServer) stop() error {
	if err := s.env.Stop(); err != nil {
		return fmt.Errorf("stop the API server: %w", err)
	}
	return nil
}

// harnessConfig returns the admin configuration with the harness's user agent, so that its
// own requests are told apart in the audit log.
func harnessConfig(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.UserAgent = "bench-harness"
	c.QPS, c.Burst = 200, 400
	return c
}

// scrape reads the API server's /metrics.
func scrape(ctx context.Context, cfg *rest.Config) (map[string]*dto.MetricFamily, error) {
	cs, err := kubernetes.NewForConfig(harnessConfig(cfg))
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	fams, err := promtext.Parse(body)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return fams, nil
}

// serverCounts are the API server's own counters at one moment (from /metrics).
type serverCounts struct {
	requests, lists, watchesOpen float64
}

func readServerCounts(ctx context.Context, cfg *rest.Config) (serverCounts, error) {
	f, err := scrape(ctx, cfg)
	if err != nil {
		return serverCounts{}, err
	}
	return serverCounts{
		requests:    promtext.Sum(f, "apiserver_request_total", nil),
		lists:       promtext.Sum(f, "apiserver_request_total", map[string]string{"verb": "LIST"}),
		watchesOpen: promtext.Sum(f, "apiserver_longrunning_requests", map[string]string{"verb": "WATCH"}),
	}, nil
}

// auditEvent is the part of an audit event the benchmark reads.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource string `json:"resource"`
		APIGroup string `json:"apiGroup"`
	} `json:"objectRef"`
}

// auditCounts are requests from one client, by verb, read from the audit log.
type auditCounts struct {
	total, watches, lists, gets, leases int
	// mutating counts create, update, patch, delete and deletecollection.
	mutating int
}

// auditOffset returns the current size of the audit log: the start of a window.
func (s *apiServer) auditOffset() int64 {
	fi, err := os.Stat(s.auditLog)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countAudit counts the requests logged between offsets from and to (to <= 0: the end) whose user agent starts with one of
// prefixes (the program name: "topolayer/", "resident/", "poller/").
func (s *apiServer) countAudit(from, to int64, prefixes ...string) (auditCounts, error) {
	f, err := os.Open(s.auditLog)
	if err != nil {
		return auditCounts{}, fmt.Errorf("audit log: %w", err)
	}
	defer f.Close()
	if _, err := f.Seek(from, io.SeekStart); err != nil {
		return auditCounts{}, fmt.Errorf("audit log: %w", err)
	}
	var r io.Reader = f
	if to > 0 {
		r = io.LimitReader(f, to-from)
	}
	var c auditCounts
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		ok := false
		for _, p := range prefixes {
			ok = ok || strings.HasPrefix(e.UserAgent, p)
		}
		if !ok {
			continue
		}
		c.total++
		switch e.Verb {
		case "watch":
			c.watches++
		case "list":
			c.lists++
		case "get":
			c.gets++
		case "create", "update", "patch", "delete", "deletecollection":
			c.mutating++
		}
		if e.ObjectRef != nil && e.ObjectRef.Resource == "leases" {
			c.leases++
		}
	}
	return c, sc.Err()
}
