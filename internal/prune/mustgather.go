package prune

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
)

// The folders of a must-gather that hold resources.
const (
	clusterScopedDir = "cluster-scoped-resources"
	namespacesDir    = "namespaces"
	// podLogsDir is the folder of a namespace where `oc adm must-gather` writes each pod's
	// object again with its containers' logs (namespaces/<ns>/pods/<pod>/<container>/...);
	// the pods themselves are in namespaces/<ns>/core/pods.yaml.
	podLogsDir = "pods"
)

// MustGather is a must-gather read as an input directory, laid out as `oc adm must-gather`
// writes it or as an input directory is.
type MustGather struct {
	// Root is the folder that holds cluster-scoped-resources/ and namespaces/: the
	// directory given, or the one folder inside it that does (oc adm must-gather writes one
	// per image, named after it).
	Root string
	// Ignored are what is not a resource, relative to the directory given, sorted: files,
	// and folders ignored whole (ending with "/"), such as timestamp, event-filter.html,
	// host_service_logs/ and each namespace's pods/ (pod logs).
	Ignored []string
	// Input is the resources.
	Input *contract.InputDir
}

// ReadMustGather reads the resources of a must-gather and ignores the rest, as upstream's
// pruner does by reading only what it asks for: a file is a resource when it is where an
// input directory keeps one (cluster-scoped-resources/<group>/<resource>.yaml or
// .../<resource>/<name>.yaml|json, namespaces/<ns>/<ns>.yaml, namespaces/<ns>/<group>/...
// likewise, the aggregated discovery files); every other file or folder is ignored and
// listed in Ignored. A resource file that cannot be read is an error, naming it.
func ReadMustGather(dir string, opts contract.ReadOptions) (*MustGather, error) {
	root, err := mustGatherRoot(dir)
	if err != nil {
		return nil, err
	}
	mg := &MustGather{Root: root}
	prefix, _ := filepath.Rel(dir, root)
	if prefix != "." {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Name() != prefix {
				mg.Ignored = append(mg.Ignored, entryName(e.Name(), e.IsDir()))
			}
		}
	}
	var keep []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch resourcePath(rel, d.IsDir()) {
		case keepEntry:
			if !d.IsDir() {
				keep = append(keep, rel)
			}
			return nil
		case ignoreEntry:
			mg.Ignored = append(mg.Ignored, entryName(path.Join(filepath.ToSlash(prefix), rel), d.IsDir()))
			if d.IsDir() {
				return filepath.SkipDir
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(mg.Ignored)
	staged, err := os.MkdirTemp("", "topolayer-must-gather-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(staged)
	for _, rel := range keep {
		if err := stage(filepath.Join(root, filepath.FromSlash(rel)), filepath.Join(staged, filepath.FromSlash(rel))); err != nil {
			return nil, err
		}
	}
	if mg.Input, err = contract.ReadInputDir(staged, opts); err != nil {
		// The staged copy has the must-gather's layout: name the must-gather's files.
		return nil, errors.New(strings.ReplaceAll(err.Error(), staged, root))
	}
	return mg, nil
}

// mustGatherRoot is dir when it holds cluster-scoped-resources/ or namespaces/, else the one
// folder inside it that does.
func mustGatherRoot(dir string) (string, error) {
	holds := func(d string) bool {
		for _, sub := range []string{clusterScopedDir, namespacesDir} {
			if fi, err := os.Stat(filepath.Join(d, sub)); err == nil && fi.IsDir() {
				return true
			}
		}
		return false
	}
	if holds(dir) {
		return dir, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var found []string
	for _, e := range entries {
		if e.IsDir() && holds(filepath.Join(dir, e.Name())) {
			found = append(found, e.Name())
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("%s: not a must-gather: neither it nor a folder inside it holds %s/ or %s/", dir, clusterScopedDir, namespacesDir)
	case 1:
		return filepath.Join(dir, found[0]), nil
	}
	return "", fmt.Errorf("%s: %d must-gathers inside (%s): name one", dir, len(found), strings.Join(found, ", "))
}

type entryKind int

const (
	walkEntry   entryKind = iota // a folder that may hold resources
	keepEntry                    // a resource file (or, for a folder, one read whole)
	ignoreEntry                  // not a resource
)

// resourcePath says whether rel, slash-separated and relative to a must-gather's root, is
// where an input directory keeps resources.
func resourcePath(rel string, isDir bool) entryKind {
	parts := strings.Split(rel, "/")
	objectFile := func(name string) bool {
		return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".json")
	}
	// below cluster-scoped-resources/ (or namespaces/<ns>/): <group>/<resource>.yaml, <group>/<resource>/<name>.yaml|json
	grouped := func(p []string) entryKind {
		switch {
		case len(p) == 1 && isDir: // <group>/
			return walkEntry
		case len(p) == 2 && isDir: // <group>/<resource>/
			return walkEntry
		case len(p) == 2 && strings.HasSuffix(p[1], ".yaml") && p[1] != ".yaml":
			return keepEntry
		case len(p) == 3 && !isDir && objectFile(p[2]):
			return keepEntry
		}
		return ignoreEntry
	}
	switch {
	case len(parts) == 1 && (rel == contract.DiscoveryCoreFile || rel == contract.DiscoveryGroupsFile) && !isDir:
		return keepEntry
	case parts[0] == clusterScopedDir && isDir && len(parts) == 1:
		return walkEntry
	case parts[0] == clusterScopedDir && len(parts) > 1:
		return grouped(parts[1:])
	case parts[0] == namespacesDir && isDir && len(parts) <= 2: // namespaces/, namespaces/<ns>/
		return walkEntry
	case parts[0] == namespacesDir && len(parts) == 3 && !isDir && parts[2] == parts[1]+".yaml":
		return keepEntry
	case parts[0] == namespacesDir && len(parts) >= 3 && parts[2] == podLogsDir:
		return ignoreEntry
	case parts[0] == namespacesDir && len(parts) >= 3:
		return grouped(parts[2:])
	}
	return ignoreEntry
}

// entryName is a relative path, with "/" after a folder's.
func entryName(rel string, isDir bool) string {
	if isDir {
		return rel + "/"
	}
	return rel
}

// stage makes to a copy of from: a hard link when both are on one file system.
func stage(from, to string) error {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	if err := os.Link(from, to); err == nil {
		return nil
	}
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ParseInputResources decodes and validates an input-resources document as upstream's
// pruner reads it: contract.ParseInputResources's rules, but a label selector may have
// matchExpressions (upstream's pruner hands the selector to its API server, which applies
// them; only its operator-side validation forbids them).
func ParseInputResources(data []byte) (*contract.InputResources, error) {
	var doc contract.InputResources
	if err := yaml.UnmarshalStrict(data, &doc); err != nil {
		return nil, fmt.Errorf("decode input-resources: %w", err)
	}
	// Validate a copy without the expressions, and parse the expressions on their own.
	check := doc
	var errs []error
	strip := func(base string, l *contract.ResourceList) {
		l.LabelSelectedResources = slices.Clone(l.LabelSelectedResources)
		for i, s := range l.LabelSelectedResources {
			if _, err := metav1.LabelSelectorAsSelector(&s.LabelSelector); err != nil {
				errs = append(errs, fmt.Errorf("%s.labelSelectedResources[%d].labelSelector: %w", base, i, err))
			}
			l.LabelSelectedResources[i].LabelSelector.MatchExpressions = nil
		}
	}
	strip("applyConfigurationResources", &check.ApplyConfigurationResources)
	strip("operandResources.configurationResources", &check.OperandResources.ConfigurationResources)
	strip("operandResources.managementResources", &check.OperandResources.ManagementResources)
	strip("operandResources.userWorkloadResources", &check.OperandResources.UserWorkloadResources)
	errs = append(errs, check.Validate())
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &doc, nil
}
