//go:build linux

package podrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// Options say which container of which pod template to run, and where its objects are.
type Options struct {
	// Client reads the ConfigMaps and Secrets the container mounts and requests the service
	// account tokens it is given: a client of the cluster the pod template was placed on.
	Client kubernetes.Interface
	// Namespace is the pod's namespace.
	Namespace string
	// Name is the pod's name (the downward API's metadata.name). Default: "podrun".
	Name string
	// Template is the pod template, as the cluster holds it.
	Template corev1.PodTemplateSpec
	// Container names the container to run. Default: the first.
	Container string
	// Binaries maps the names the container's command runs (those its image would hold on
	// PATH) to local executables.
	Binaries map[string]string
	// InCluster, when set, is the API server a pod reaches as "the cluster" (a kubelet's
	// KUBERNETES_SERVICE_HOST and _PORT); the service account token a kubelet mounts (unless
	// the template opts out) is requested for it. Without it, a template that mounts its
	// token is refused.
	InCluster *InCluster
	// Stdout and Stderr receive the process's output. Default: discarded.
	Stdout, Stderr io.Writer
}

// InCluster is the API server a pod's in-cluster configuration reaches.
type InCluster struct {
	// Host and Port are what KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT say.
	Host, Port string
	// CA is the API server's CA bundle (the token volume's ca.crt).
	CA []byte
}

// Pod is a running container.
type Pod struct {
	cmd    *exec.Cmd
	dir    string
	exited chan struct{}
	err    error
}

// tokenMount is where a kubelet mounts a pod's service account token.
const tokenMount = "/var/run/secrets/kubernetes.io/serviceaccount"

// hostDirs are the top-level directories a mount may be under: the process sees the written
// files there instead of the host's. Others (/etc, /usr, ...) are refused.
var hostDirs = []string{"var", "run", "tmp", "srv", "opt"}

// unprivileged is the host user the process runs as when podrun runs as root.
const unprivileged = 65534

// Start writes the container's volumes and starts its process. The error names the
// container, volume, object or field that stops the start.
func Start(ctx context.Context, o Options) (*Pod, error) {
	c, err := o.container()
	if err != nil {
		return nil, err
	}
	if len(c.Command) == 0 {
		return nil, fmt.Errorf("podrun: container %s: no command (the image's entrypoint is unknown here)", c.Name)
	}
	dir, err := os.MkdirTemp("", "topolayer-podrun-")
	if err != nil {
		return nil, err
	}
	p := &Pod{dir: dir, exited: make(chan struct{})}
	if err := p.start(ctx, o, c); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("podrun: %s/%s container %s: %w", o.Namespace, o.name(), c.Name, err)
	}
	return p, nil
}

func (o Options) name() string {
	if o.Name == "" {
		return "podrun"
	}
	return o.Name
}

// container returns the container Options names.
func (o Options) container() (corev1.Container, error) {
	cs := o.Template.Spec.Containers
	if len(cs) == 0 {
		return corev1.Container{}, errors.New("podrun: the pod template has no container")
	}
	if o.Container == "" {
		return cs[0], nil
	}
	for _, c := range cs {
		if c.Name == o.Container {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("podrun: the pod template has no container %q", o.Container)
}

func (p *Pod) start(ctx context.Context, o Options, c corev1.Container) error {
	root := filepath.Join(p.dir, "root")
	volumes := map[string]corev1.Volume{}
	for _, v := range o.Template.Spec.Volumes {
		volumes[v.Name] = v
	}
	tops := map[string]bool{}
	var writable []string // the mounts of emptyDir and hostPath volumes
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			return fmt.Errorf("volumeMounts %s: no volume of that name", m.Name)
		}
		if v.EmptyDir != nil && path.Clean(m.MountPath) == "/tmp" {
			// A scratch /tmp (HyperShift's tmp-dir beside a read-only root filesystem) is the
			// host's: podrun's own directory and the binaries it links are there, and an
			// empty directory mounted over it would hide them from the process.
			continue
		}
		files, err := o.volumeFiles(ctx, v)
		if err != nil {
			return fmt.Errorf("volume %s: %w", v.Name, err)
		}
		top, err := o.write(root, m, files)
		if err != nil {
			return fmt.Errorf("volumeMounts %s (%s): %w", m.Name, m.MountPath, err)
		}
		tops[top] = true
		if (v.EmptyDir != nil || v.HostPath != nil) && !m.ReadOnly && m.SubPath == "" {
			writable = append(writable, path.Clean(m.MountPath))
		}
	}
	env, err := o.env(ctx, c)
	if err != nil {
		return err
	}
	if automount := o.Template.Spec.AutomountServiceAccountToken; automount == nil || *automount {
		if o.InCluster == nil {
			return errors.New("the template mounts its service account token, and no in-cluster API server was given")
		}
		files, err := o.serviceAccountFiles(ctx)
		if err != nil {
			return err
		}
		top, err := o.write(root, corev1.VolumeMount{MountPath: tokenMount, ReadOnly: true}, files)
		if err != nil {
			return err
		}
		tops[top] = true
	}
	if o.InCluster != nil {
		env = append(env, "KUBERNETES_SERVICE_HOST="+o.InCluster.Host, "KUBERNETES_SERVICE_PORT="+o.InCluster.Port)
	}
	bin := filepath.Join(p.dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		return err
	}
	for name, exe := range o.Binaries {
		if err := os.Symlink(exe, filepath.Join(bin, name)); err != nil {
			return fmt.Errorf("binary %s: %w", name, err)
		}
	}
	env = append(env, "PATH="+bin+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")

	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		uid, gid = unprivileged, unprivileged
		if err := chownAll(root, uid, gid); err != nil {
			return err
		}
	}
	if err := os.Chmod(p.dir, 0o711); err != nil {
		return err
	}
	dirs := slices.Sorted(func(yield func(string) bool) {
		for d := range tops {
			if !yield(d) {
				return
			}
		}
	})
	// The wrapper mounts the written directories over the host's, in the process's own
	// mount namespace (a user namespace's: nothing propagates back), then becomes the
	// container's command.
	// The scratch mounts, when the root filesystem is read-only, come as the wrapper's
	// arguments between root and "--", never as script text.
	var scratch []string
	script := `set -e; root="$1"; shift; for d in ` + strings.Join(dirs, " ") + `; do mount --bind "$root/$d" "/$d"; done; `
	if sc := c.SecurityContext; sc != nil && sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		// As a kubelet's: what the container's own filesystem holds is read-only, the
		// scratch volumes it mounts are not. The written directories stand for the image's
		// filesystem; they become read-only, and each scratch mount is bound writable again.
		script += `for d in ` + strings.Join(dirs, " ") + `; do mount -o remount,bind,ro "/$d"; done; `
		scratch = writable
	}
	script += `while [ "$1" != -- ]; do mount --bind "$root$1" "$1"; shift; done; shift; exec "$@"`
	args := append([]string{"-c", script, "podrun", root}, scratch...)
	args = append(append(args, "--"), expand(append(slices.Clone(c.Command), c.Args...), env)...)
	cmd := exec.Command("/bin/sh", args...)
	cmd.Env = env
	cmd.Dir = "/"
	if c.WorkingDir != "" {
		cmd.Dir = c.WorkingDir
	}
	cmd.Stdout, cmd.Stderr = o.Stdout, o.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		// Root of the user namespace, keeping its capabilities across exec: the wrapper
		// mounts; on the host it is the unprivileged user.
		Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		Setpgid:    true,
		Pdeathsig:  syscall.SIGKILL,
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %v: %w (user and mount namespaces needed)", c.Command, err)
	}
	p.cmd = cmd
	go func() {
		p.err = cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// file is one file of a volume, at a path relative to its mount.
type file struct {
	data []byte
	mode fs.FileMode
}

// volumeFiles returns the files of a volume as a kubelet would write them.
func (o Options) volumeFiles(ctx context.Context, v corev1.Volume) (map[string]file, error) {
	switch {
	case v.ConfigMap != nil:
		return o.configMapFiles(ctx, v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.DefaultMode, v.ConfigMap.Optional)
	case v.Secret != nil:
		return o.secretFiles(ctx, v.Secret.SecretName, v.Secret.Items, v.Secret.DefaultMode, v.Secret.Optional)
	case v.EmptyDir != nil:
		return map[string]file{}, nil
	case v.HostPath != nil:
		// The node's directory: a fresh one here, the host's is not the pod's to write.
		return map[string]file{}, nil
	case v.Projected != nil:
		files := map[string]file{}
		for i, src := range v.Projected.Sources {
			var part map[string]file
			var err error
			switch {
			case src.ConfigMap != nil:
				part, err = o.configMapFiles(ctx, src.ConfigMap.Name, src.ConfigMap.Items, v.Projected.DefaultMode, src.ConfigMap.Optional)
			case src.Secret != nil:
				part, err = o.secretFiles(ctx, src.Secret.Name, src.Secret.Items, v.Projected.DefaultMode, src.Secret.Optional)
			case src.ServiceAccountToken != nil:
				var token []byte
				if token, err = o.token(ctx, src.ServiceAccountToken.Audience, src.ServiceAccountToken.ExpirationSeconds); err == nil {
					part = map[string]file{src.ServiceAccountToken.Path: {token, mode(v.Projected.DefaultMode, nil)}}
				}
			default:
				err = errors.New("only configMap, secret and serviceAccountToken sources are supported")
			}
			if err != nil {
				return nil, fmt.Errorf("projected.sources[%d]: %w", i, err)
			}
			for k, f := range part {
				files[k] = f
			}
		}
		return files, nil
	}
	return nil, errors.New("only configMap, secret, emptyDir, hostPath and projected volumes are supported")
}

func (o Options) configMapFiles(ctx context.Context, name string, items []corev1.KeyToPath, defaultMode *int32, optional *bool) (map[string]file, error) {
	cm, err := o.Client.CoreV1().ConfigMaps(o.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return missing("ConfigMap", o.Namespace, name, optional, err)
	}
	data := map[string][]byte{}
	for k, v := range cm.Data {
		data[k] = []byte(v)
	}
	for k, v := range cm.BinaryData {
		data[k] = v
	}
	return project("ConfigMap "+o.Namespace+"/"+name, data, items, defaultMode, optional)
}

func (o Options) secretFiles(ctx context.Context, name string, items []corev1.KeyToPath, defaultMode *int32, optional *bool) (map[string]file, error) {
	s, err := o.Client.CoreV1().Secrets(o.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return missing("Secret", o.Namespace, name, optional, err)
	}
	return project("Secret "+o.Namespace+"/"+name, s.Data, items, defaultMode, optional)
}

// missing is a volume whose object cannot be read: empty when optional, else the error
// that keeps a kubelet from starting the pod.
func missing(kind, namespace, name string, optional *bool, err error) (map[string]file, error) {
	if apierrors.IsNotFound(err) && optional != nil && *optional {
		return map[string]file{}, nil
	}
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("%s %s/%s not found, and not optional: a kubelet would not start the pod", kind, namespace, name)
	}
	return nil, fmt.Errorf("%s %s/%s: %w", kind, namespace, name, err)
}

// project maps an object's keys to files: every key, or the items named.
func project(what string, data map[string][]byte, items []corev1.KeyToPath, defaultMode *int32, optional *bool) (map[string]file, error) {
	files := map[string]file{}
	if len(items) == 0 {
		for k, v := range data {
			files[k] = file{v, mode(defaultMode, nil)}
		}
		return files, nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional != nil && *optional {
				continue
			}
			return nil, fmt.Errorf("%s has no key %q (items)", what, it.Key)
		}
		files[it.Path] = file{v, mode(defaultMode, it.Mode)}
	}
	return files, nil
}

// mode is a file's mode: the item's, else the volume's default, else a kubelet's 0644.
func mode(defaultMode, itemMode *int32) fs.FileMode {
	switch {
	case itemMode != nil:
		return fs.FileMode(*itemMode) & fs.ModePerm
	case defaultMode != nil:
		return fs.FileMode(*defaultMode) & fs.ModePerm
	}
	return 0o644
}

// token requests a token of the pod's service account.
func (o Options) token(ctx context.Context, audience string, expiration *int64) ([]byte, error) {
	sa := o.Template.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: expiration}}
	if audience != "" {
		req.Spec.Audiences = []string{audience}
	}
	tr, err := o.Client.CoreV1().ServiceAccounts(o.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("a token of service account %s/%s: %w", o.Namespace, sa, err)
	}
	return []byte(tr.Status.Token), nil
}

// serviceAccountFiles are the files of a kubelet's service account token volume.
func (o Options) serviceAccountFiles(ctx context.Context) (map[string]file, error) {
	token, err := o.token(ctx, "", nil)
	if err != nil {
		return nil, err
	}
	return map[string]file{
		"token":     {token, 0o644},
		"ca.crt":    {o.InCluster.CA, 0o644},
		"namespace": {[]byte(o.Namespace), 0o644},
	}, nil
}

// write writes a mount's files under root and returns the top-level directory it is under.
func (o Options) write(root string, m corev1.VolumeMount, files map[string]file) (string, error) {
	target := path.Clean(m.MountPath)
	if !path.IsAbs(target) || target == "/" {
		return "", errors.New("mountPath must be an absolute path below /")
	}
	top, _, _ := strings.Cut(strings.TrimPrefix(target, "/"), "/")
	if !slices.Contains(hostDirs, top) {
		return "", fmt.Errorf("podrun mounts only under /%s: /%s is the host's", strings.Join(hostDirs, ", /"), top)
	}
	dest := filepath.Join(root, filepath.FromSlash(target))
	if m.SubPath != "" {
		f, ok := files[m.SubPath]
		if !ok {
			return "", fmt.Errorf("subPath %q: no such file in the volume", m.SubPath)
		}
		if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
			return "", err
		}
		return top, os.WriteFile(dest, f.data, f.mode)
	}
	if err := os.MkdirAll(dest, 0o755); err != nil {
		return "", err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		rel := path.Clean(name)
		if path.IsAbs(rel) || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("file %q: leaves the mount", name)
		}
		p := filepath.Join(dest, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, files[name].data, files[name].mode); err != nil {
			return "", err
		}
		if err := os.Chmod(p, files[name].mode); err != nil { // not the umask's
			return "", err
		}
	}
	return top, nil
}

// env resolves the container's environment: values, ConfigMap and Secret keys, and the
// pod's name and namespace from the downward API.
func (o Options) env(ctx context.Context, c corev1.Container) ([]string, error) {
	var env []string
	for i, e := range c.Env {
		value := e.Value
		if src := e.ValueFrom; src != nil {
			switch {
			case src.ConfigMapKeyRef != nil:
				files, err := o.configMapFiles(ctx, src.ConfigMapKeyRef.Name, []corev1.KeyToPath{{Key: src.ConfigMapKeyRef.Key, Path: "v"}}, nil, src.ConfigMapKeyRef.Optional)
				if err != nil {
					return nil, fmt.Errorf("env[%d] %s: %w", i, e.Name, err)
				}
				value = string(files["v"].data)
			case src.SecretKeyRef != nil:
				files, err := o.secretFiles(ctx, src.SecretKeyRef.Name, []corev1.KeyToPath{{Key: src.SecretKeyRef.Key, Path: "v"}}, nil, src.SecretKeyRef.Optional)
				if err != nil {
					return nil, fmt.Errorf("env[%d] %s: %w", i, e.Name, err)
				}
				value = string(files["v"].data)
			case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.name":
				value = o.name()
			case src.FieldRef != nil && src.FieldRef.FieldPath == "metadata.namespace":
				value = o.Namespace
			default:
				return nil, fmt.Errorf("env[%d] %s: only values, configMapKeyRef, secretKeyRef and the pod's name and namespace are supported", i, e.Name)
			}
		}
		env = append(env, e.Name+"="+expand([]string{value}, env)[0])
	}
	if len(c.EnvFrom) > 0 {
		return nil, errors.New("envFrom is not supported")
	}
	return env, nil
}

// reference is a kubelet's $(VAR) reference in a command, an argument or a value.
var reference = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(VAR) by VAR's value in env, as a kubelet does; an unknown reference stays.
func expand(in []string, env []string) []string {
	values := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		values[k] = v
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = reference.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := values[m[2:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}

// chownAll gives the tree at root to uid and gid.
func chownAll(root string, uid, gid int) error {
	return filepath.WalkDir(root, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// Exited is closed when the process has exited.
func (p *Pod) Exited() <-chan struct{} { return p.exited }

// Err returns how the process exited, once Exited is closed.
func (p *Pod) Err() error { return p.err }

// Stop stops the process (SIGTERM, then SIGKILL after grace), waits for it and removes what
// Start wrote.
func (p *Pod) Stop(grace time.Duration) {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(grace):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.exited
		}
	}
	_ = os.RemoveAll(p.dir)
}
