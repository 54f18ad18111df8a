package openshiftapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/yaml"

	configv1 "github.com/openshift/api/config/v1"
)

// ModulePath is the module whose CRD manifests this package finds.
const ModulePath = "github.com/openshift/api"

// configGroup is referenced so that the module is linked into every binary using this
// package, and its version recorded in the binary's build information.
var configGroup = configv1.GroupName

// featureSetVariant matches the manifests generated for feature sets other than Default.
var featureSetVariant = regexp.MustCompile(`-(CustomNoUpgrade|DevPreviewNoUpgrade|TechPreviewNoUpgrade|OKD)\.crd\.yaml$`)

// ModuleDir returns the directory of the openshift/api module version in this binary's build
// information, downloading it through the module proxy when the module cache lacks it (once
// per process).
func ModuleDir() (string, error) { return moduleDir() }

// moduleDir finds the directory once.
var moduleDir = sync.OnceValues(func() (string, error) {
	version, err := moduleVersion()
	if err != nil {
		// Test binaries record no dependencies: ask the go command about the module being
		// built, as `go test` runs inside it.
		if dir, listErr := listModuleDir(); listErr == nil {
			return dir, nil
		}
		return "", err
	}
	if dir := cachedDir(version); dir != "" {
		return dir, nil
	}
	cmd := exec.Command("go", "mod", "download", "-json", ModulePath+"@"+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", ModulePath, version, err, stderr.String())
	}
	var info struct{ Dir string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: no directory in %q", ModulePath, version, out)
	}
	return info.Dir, nil
})

// listModuleDir asks `go list` for the module's directory, from the working directory's module.
func listModuleDir() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", ModulePath).Output()
	if err != nil {
		return "", fmt.Errorf("go list -m %s: %w", ModulePath, err)
	}
	dir := strings.TrimSpace(string(out))
	if dir == "" {
		return "", fmt.Errorf("go list -m %s: no directory (is the module downloaded?)", ModulePath)
	}
	return dir, nil
}

func moduleVersion() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("no build information in this binary")
	}
	for _, dep := range bi.Deps {
		if dep.Path == ModulePath {
			if dep.Replace != nil {
				return dep.Replace.Version, nil
			}
			return dep.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not a dependency of this binary", ModulePath)
}

// cachedDir returns the module's directory in the module cache, or "" when it is not there.
func cachedDir(version string) string {
	var roots []string
	if c := os.Getenv("GOMODCACHE"); c != "" {
		roots = append(roots, c)
	}
	if out, err := exec.Command("go", "env", "GOMODCACHE").Output(); err == nil {
		roots = append(roots, strings.TrimSpace(string(out)))
	}
	if home, err := os.UserHomeDir(); err == nil {
		roots = append(roots, filepath.Join(home, "go", "pkg", "mod"))
	}
	for _, root := range roots {
		dir := filepath.Join(root, ModulePath+"@"+version)
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	return ""
}

// PayloadCRDFiles returns the Default feature-set manifests of every CRD openshift/api
// generates (payload-manifests/crds and each API group's zz_generated.crd-manifests), one file
// per CRD name, sorted by path.
func PayloadCRDFiles() ([]string, error) {
	dir, err := ModuleDir()
	if err != nil {
		return nil, err
	}
	candidates, err := filepath.Glob(filepath.Join(dir, "payload-manifests", "crds", "*.crd.yaml"))
	if err != nil {
		return nil, err
	}
	more, err := filepath.Glob(filepath.Join(dir, "*", "*", "zz_generated.crd-manifests", "*.crd.yaml"))
	if err != nil {
		return nil, err
	}
	candidates = append(candidates, more...)
	byName := map[string]string{}
	for _, f := range candidates {
		if featureSetVariant.MatchString(f) {
			continue
		}
		name, err := crdName(f)
		if err != nil {
			return nil, err
		}
		if _, seen := byName[name]; !seen {
			byName[name] = f
		}
	}
	files := make([]string, 0, len(byName))
	for _, f := range byName {
		files = append(files, f)
	}
	sort.Strings(files)
	return files, nil
}

// CRDFile returns the Default manifest of one CRD by name, e.g.
// "authentications.operator.openshift.io".
func CRDFile(name string) (string, error) {
	files, err := PayloadCRDFiles()
	if err != nil {
		return "", err
	}
	for _, f := range files {
		if n, err := crdName(f); err == nil && n == name {
			return f, nil
		}
	}
	return "", fmt.Errorf("%s has no CRD named %q", ModulePath, name)
}

func crdName(file string) (string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var head struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return "", fmt.Errorf("%s: %w", file, err)
	}
	return head.Metadata.Name, nil
}
