package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/topolayer/topolayer/internal/e2e/cluster"
)

// kubectlBinary returns the kubectl built beside the API servers (cluster.Kubectl).
func kubectlBinary(t *testing.T) string {
	t.Helper()
	bin, err := cluster.Kubectl(t.Context(), assetsDir, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// pod is a pod of a workload as a kubelet would start one container of it, without a
// kubelet: its Secret, ConfigMap and projected volumes read from the API server of the
// cluster it runs on into files at their mount paths under root, its environment resolved
// (values, ConfigMap and Secret keys, the downward API's namespace and name), and a path in
// the environment that names a mounted file rewritten to its place under root.
type pod struct {
	root string
	env  []string
	// inCluster is the service account token a kubelet would mount at
	// /var/run/secrets/kubernetes.io/serviceaccount, when the pod mounts one; "" otherwise.
	inCluster string
	// missing are the Secrets and ConfigMaps the pod needs that do not exist: a kubelet
	// would not start the container until they do. The check goes on without them.
	missing []string
}

// materialize sets up container of spec, a pod template of namespace on the cluster of cs
// (whose client configuration is cfg), under a temporary root.
func materialize(t *testing.T, cs kubernetes.Interface, cfg *rest.Config, namespace, podName string, spec corev1.PodSpec, container string) *pod {
	t.Helper()
	ctx := t.Context()
	p := &pod{root: t.TempDir()}
	var c *corev1.Container
	for i := range spec.Containers {
		if spec.Containers[i].Name == container {
			c = &spec.Containers[i]
		}
	}
	if c == nil {
		t.Fatalf("no container %s in %s/%s", container, namespace, podName)
	}
	// sourceData reads the data of the Secret or the ConfigMap (kind "secret" or "configmap")
	// name: of a ConfigMap, its data and, with binary, its binaryData. One that does not exist
	// has none, and is missing unless optional.
	sourceData := func(kind, name string, optional *bool, binary bool) (map[string][]byte, error) {
		var data map[string][]byte
		var err error
		if kind == "secret" {
			var s *corev1.Secret
			if s, err = cs.CoreV1().Secrets(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
				data = s.Data
			}
		} else {
			var cm *corev1.ConfigMap
			if cm, err = cs.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{}); err == nil {
				data = map[string][]byte{}
				for k, s := range cm.Data {
					data[k] = []byte(s)
				}
				if binary {
					for k, b := range cm.BinaryData {
						data[k] = b
					}
				}
			}
		}
		if apierrors.IsNotFound(err) {
			if !ptr.Deref(optional, false) {
				p.missing = append(p.missing, kind+" "+name)
			}
			return nil, nil
		}
		return data, err
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	// files returns the files a volume holds, by path inside it; nil for a volume that a
	// kubelet would make empty (emptyDir) or that this check does not read.
	files := func(v corev1.Volume) map[string][]byte {
		out := map[string][]byte{}
		// from projects the data of the Secret or ConfigMap name into out.
		from := func(kind, name string, items []corev1.KeyToPath, optional *bool) {
			data, err := sourceData(kind, name, optional, true)
			if err != nil {
				t.Fatalf("volume %s: %s %s/%s: %v", v.Name, kind, namespace, name, err)
			}
			project(out, data, items)
		}
		switch {
		case v.Secret != nil:
			from("secret", v.Secret.SecretName, v.Secret.Items, v.Secret.Optional)
		case v.ConfigMap != nil:
			from("configmap", v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional)
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				switch {
				case src.Secret != nil:
					from("secret", src.Secret.Name, src.Secret.Items, src.Secret.Optional)
				case src.ConfigMap != nil:
					from("configmap", src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional)
				}
			}
		}
		return out
	}
	var mounts []string
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("container %s mounts %s, which is not a volume of the pod", c.Name, m.Name)
		}
		dir := filepath.Join(p.root, m.MountPath)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, data := range files(v) {
			if m.SubPath != "" {
				if name != m.SubPath {
					continue
				}
				name = ""
			}
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		mounts = append(mounts, m.MountPath)
	}

	// The service account token, when the pod mounts one: a kubelet asks the API server it
	// runs on for a bound token of the pod's service account.
	if ptr.Deref(spec.AutomountServiceAccountToken, true) {
		sa := spec.ServiceAccountName
		if sa == "" {
			sa = "default"
		}
		tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authenticationv1.TokenRequest{
			Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("the service account token of %s/%s: %v", namespace, sa, err)
		}
		p.inCluster = tr.Status.Token
	}

	// The environment.
	lookup := func(kind, name, key string, optional *bool) (string, bool) {
		data, err := sourceData(kind, name, optional, false)
		if err != nil {
			t.Fatalf("container %s: env from %s %s/%s: %v", c.Name, kind, namespace, name, err)
		}
		v, ok := data[key]
		return string(v), ok
	}
	env := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := env[k]; !ok {
			order = append(order, k)
		}
		env[k] = v
	}
	for _, from := range c.EnvFrom {
		var kind, name string
		var optional *bool
		switch {
		case from.ConfigMapRef != nil:
			kind, name, optional = "configmap", from.ConfigMapRef.Name, from.ConfigMapRef.Optional
		case from.SecretRef != nil:
			kind, name, optional = "secret", from.SecretRef.Name, from.SecretRef.Optional
		default:
			continue
		}
		data, err := sourceData(kind, name, optional, false)
		if err != nil {
			t.Fatalf("container %s: envFrom %s %s: %v", c.Name, kind, name, err)
		}
		for k, v := range data {
			set(from.Prefix+k, string(v))
		}
	}
	for _, e := range c.Env {
		switch {
		case e.ValueFrom == nil:
			set(e.Name, e.Value)
		case e.ValueFrom.ConfigMapKeyRef != nil:
			r := e.ValueFrom.ConfigMapKeyRef
			if v, ok := lookup("configmap", r.Name, r.Key, r.Optional); ok {
				set(e.Name, v)
			}
		case e.ValueFrom.SecretKeyRef != nil:
			r := e.ValueFrom.SecretKeyRef
			if v, ok := lookup("secret", r.Name, r.Key, r.Optional); ok {
				set(e.Name, v)
			}
		case e.ValueFrom.FieldRef != nil:
			switch e.ValueFrom.FieldRef.FieldPath {
			case "metadata.namespace":
				set(e.Name, namespace)
			case "metadata.name":
				set(e.Name, podName)
			}
		}
	}
	for _, k := range order {
		v := env[k]
		for _, m := range mounts {
			if v == m || strings.HasPrefix(v, strings.TrimSuffix(m, "/")+"/") {
				v = filepath.Join(p.root, v)
				break
			}
		}
		p.env = append(p.env, k+"="+v)
	}
	if p.inCluster != "" {
		// client-go reads in-cluster credentials from fixed paths (and KUBERNETES_SERVICE_*),
		// which a test cannot write; the same token, server and CA go to the process as
		// the kubeconfig it would otherwise build from them, unless KUBECONFIG is set.
		if _, set := env["KUBECONFIG"]; !set {
			p.env = append(p.env, "KUBECONFIG="+writeKubeconfig(t, p.root, cfg.Host, cfg.CAData, namespace, p.inCluster))
		}
	}
	return p
}

// project writes data into out as a Secret or ConfigMap volume does: every key, or the
// items asked for at their paths.
func project(out, data map[string][]byte, items []corev1.KeyToPath) {
	if len(items) == 0 {
		for k, v := range data {
			out[k] = v
		}
		return
	}
	for _, it := range items {
		if v, ok := data[it.Key]; ok {
			out[it.Path] = v
		}
	}
}

// writeKubeconfig writes a kubeconfig of one server, CA and token under dir.
func writeKubeconfig(t *testing.T, dir, server string, ca []byte, namespace, token string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters["c"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	kc.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: token}
	kc.Contexts["c"] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: namespace}
	kc.CurrentContext = "c"
	file := filepath.Join(dir, "in-cluster.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, file); err != nil {
		t.Fatal(err)
	}
	return file
}

// command runs bin as the pod's process would, with exactly the pod's environment (and PATH
// and HOME), and returns its stdout, stderr and error.
func (p *pod) command(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + p.root}, p.env...)
	return cmd
}

// kubectl runs kubectl as the pod, and returns its trimmed stdout and stderr.
func (p *pod) kubectl(t *testing.T, kubectl string, args ...string) (string, string, error) {
	t.Helper()
	cmd := p.command(t.Context(), kubectl, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return strings.TrimSpace(stdout.String()), strings.TrimSpace(stderr.String()), err
}

// podExpectation is what a pod check expects of one workload's pod.
type podExpectation struct {
	// user is the identity `kubectl auth whoami` must name.
	user string
	// allowed are `kubectl auth can-i` arguments that must answer yes where the pod acts.
	allowed [][]string
	// refusedOn, when set, is a server (and its CA) the pod's credentials must not reach:
	// `kubectl auth whoami` against it must fail as Unauthorized.
	refusedOn *rest.Config
}

// checkPod runs kubectl as the pod and checks what it expects.
func (p *pod) check(t *testing.T, kubectl string, want podExpectation) {
	t.Helper()
	out, stderr, err := p.kubectl(t, kubectl, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
	if err != nil || out != want.user {
		t.Errorf("kubectl auth whoami as the pod: %q (%v %s), want %q", out, err, stderr, want.user)
	} else {
		t.Logf("kubectl auth whoami as the pod: %s", out)
	}
	yes := 0
	for _, args := range want.allowed {
		out, stderr, err := p.kubectl(t, kubectl, append([]string{"auth", "can-i"}, args...)...)
		if err != nil || out != "yes" {
			t.Errorf("kubectl auth can-i %s as the pod: %q (%v %s), want yes", strings.Join(args, " "), out, err, stderr)
			continue
		}
		yes++
	}
	t.Logf("kubectl auth can-i as the pod: yes to %d of the %d grants of its standalone RBAC", yes, len(want.allowed))
	if other := want.refusedOn; other != nil {
		caFile := filepath.Join(p.root, "other-ca.crt")
		if err := os.WriteFile(caFile, other.CAData, 0o600); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := p.kubectl(t, kubectl, "--server", other.Host, "--certificate-authority", caFile, "auth", "whoami")
		if err == nil || !strings.Contains(stderr, "Unauthorized") {
			t.Errorf("kubectl auth whoami as the pod against %s: %q %v %s; want Unauthorized", other.Host, out, err, stderr)
		} else {
			t.Logf("the same credentials against %s: %s", other.Host, stderr)
		}
	}
}

// runOperand starts bin as the pod's process, waits until done reports true, and stops it
// with SIGTERM as a kubelet would.
func (p *pod) runOperand(t *testing.T, bin string, args []string, done func(context.Context) (bool, error)) {
	t.Helper()
	cmd := p.command(t.Context(), bin, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	err := poll(t.Context(), 100*time.Millisecond, 30*time.Second, func(ctx context.Context) (bool, error) {
		select {
		case err := <-exited:
			return false, fmt.Errorf("%s exited: %v", filepath.Base(bin), err)
		default:
		}
		return done(ctx)
	})
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
	}
	if err != nil {
		t.Fatalf("%s as the pod: %v\n%s", filepath.Base(bin), err, log.String())
	}
	t.Logf("%s as the pod: %s", filepath.Base(bin), strings.TrimSpace(log.String()))
}
