package cluster

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ModulePath is the module whose hack/envtest-assets.sh builds the API server binaries.
const ModulePath = "github.com/topolayer/topolayer"

// AssetsScript is the script, relative to the module root, that builds kube-apiserver and
// etcd from the Go module proxy into a cache and prints the directory holding them.
const AssetsScript = "hack/envtest-assets.sh"

// EnvAssets names the directory holding the kube-apiserver and etcd binaries, as for
// controller-runtime's envtest.
const EnvAssets = "KUBEBUILDER_ASSETS"

// assetBinaries are the binaries an assets directory must hold.
var assetBinaries = []string{"kube-apiserver", "etcd"}

// ErrNoAssets is wrapped by AssetsDir's error when there are no API server binaries to use.
var ErrNoAssets = errors.New("no kube-apiserver and etcd binaries")

// AssetsDir returns the directory holding the kube-apiserver and etcd binaries:
// $KUBEBUILDER_ASSETS when it is set (it must hold both), otherwise what the repository's
// hack/envtest-assets.sh prints. The script builds the binaries from the Go module proxy the
// first time, which takes minutes, and returns the cached ones afterwards; its progress goes
// to progress (nil: discarded). The script is found under the module root (see ModuleRoot).
func AssetsDir(ctx context.Context, progress io.Writer) (string, error) {
	if dir := os.Getenv(EnvAssets); dir != "" {
		if err := checkAssets(dir); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvAssets, dir, err)
		}
		return dir, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("%w: %s is not set, and %s was not found: %w (set %s=$(%s) from the repository)",
			ErrNoAssets, EnvAssets, AssetsScript, err, EnvAssets, AssetsScript)
	}
	script := filepath.Join(root, AssetsScript)
	cmd := exec.CommandContext(ctx, script)
	cmd.Dir = root
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%w: %s is not set, and %s failed: %w: %s",
			ErrNoAssets, EnvAssets, script, err, lastLines(stderr.Bytes(), 10))
	}
	dir := strings.TrimSpace(stdout.String())
	if dir == "" {
		return "", fmt.Errorf("%w: %s printed no directory", ErrNoAssets, script)
	}
	if err := checkAssets(dir); err != nil {
		return "", fmt.Errorf("%s printed %s: %w", script, dir, err)
	}
	return dir, nil
}

// checkAssets reports whether dir holds executable kube-apiserver and etcd files.
func checkAssets(dir string) error {
	var errs []error
	for _, bin := range assetBinaries {
		fi, err := os.Stat(filepath.Join(dir, bin))
		switch {
		case err != nil:
			errs = append(errs, err)
		case fi.IsDir() || fi.Mode().Perm()&0o111 == 0:
			errs = append(errs, fmt.Errorf("%s: not an executable file", filepath.Join(dir, bin)))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", ErrNoAssets, err)
	}
	return nil
}

// ModuleRoot returns the root directory of the topolayer module: the first directory, from
// the working directory up, whose go.mod declares ModulePath; failing that, the one holding
// this package's source file, for a binary built from the repository without -trimpath (so
// that `topolayer-devenv up` works from any directory).
func ModuleRoot() (string, error) {
	var tried []string
	if wd, err := os.Getwd(); err == nil {
		if root, ok := findModuleRoot(wd); ok {
			return root, nil
		}
		tried = append(tried, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if root, ok := findModuleRoot(filepath.Dir(file)); ok {
			return root, nil
		}
		tried = append(tried, filepath.Dir(file))
	}
	return "", fmt.Errorf("no go.mod of module %s in %s or above", ModulePath, strings.Join(tried, " or "))
}

// findModuleRoot walks up from dir to the first go.mod declaring ModulePath.
func findModuleRoot(dir string) (string, bool) {
	for {
		if modulePathOf(filepath.Join(dir, "go.mod")) == ModulePath {
			return dir, true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}

// Kubectl returns the path of a kubectl binary beside the API server's in assetsDir (see
// AssetsDir), asking the repository's hack/envtest-assets.sh to build it there, from the Go
// module proxy at the API server's version, when it is missing (about a minute, once).
func Kubectl(ctx context.Context, assetsDir string, progress io.Writer) (string, error) {
	bin := filepath.Join(assetsDir, "kubectl")
	if fi, err := os.Stat(bin); err == nil && !fi.IsDir() && fi.Mode().Perm()&0o111 != 0 {
		return bin, nil
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", fmt.Errorf("kubectl: not in %s, and %s was not found: %w", assetsDir, AssetsScript, err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(root, AssetsScript))
	cmd.Dir = root
	cmd.Env = append(os.Environ(), EnvAssets+"="+assetsDir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if progress != nil {
		cmd.Stderr = io.MultiWriter(&stderr, progress)
	}
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("kubectl: build into %s with %s: %w: %s", assetsDir, AssetsScript, err, lastLines(stderr.Bytes(), 10))
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("kubectl: %s did not build it into %s: %w", AssetsScript, assetsDir, err)
	}
	return bin, nil
}

// modulePathOf returns the module path that a go.mod file declares, or "".
func modulePathOf(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if rest, ok := strings.CutPrefix(line, "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			path, _, _ := strings.Cut(strings.TrimSpace(rest), "//")
			return strings.Trim(strings.TrimSpace(path), `"`)
		}
	}
	return ""
}

// lastLines returns the last n lines of b, trimmed, for error messages.
func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
