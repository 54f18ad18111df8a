package harness

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
)

// This file reads output directories as the multi-operator-manager's harness (at 90ec5f2,
// with the library-go it vendors) does, and compares them as it does. That reader is more
// lenient than contract.ReadOutputDir in some ways (unknown keys, stray files, orphan
// metadata, .json files are ignored) and stricter or blind in others (it knows only the
// `mame:` spelling of the name key, tells an absent errors list from an empty one, and
// rejects any top-level entry but the three classes and the logs). The harness's verdicts
// follow it, so a test passes here exactly when it passes there.

// upstreamClasses are the class folders the upstream reader reads; any other top-level
// entry but the logs and controller-results.yaml is an error.
var upstreamClasses = []contract.Class{contract.ClassConfiguration, contract.ClassManagement, contract.ClassUserWorkload}

// upstreamActions are the action folders the upstream reader reads; others are ignored.
var upstreamActions = []contract.Action{"Apply", "ApplyStatus", "Create", "Delete", "Patch", "PatchStatus", "Update", "UpdateStatus"}

// upstreamBody matches the base name of a body file. The upstream pattern is unanchored, so
// any name holding "-body-", at least two characters, then "yaml" is a body (a .json file
// matches only when its name holds "yaml" after the "-body-" part).
var upstreamBody = regexp.MustCompile(`-body-.+.yaml`)

// upstreamResults is controller-results.yaml as upstream parses it: unknown keys ignored, an
// absent errors list distinct from an empty one.
type upstreamResults struct {
	ControllerResults []upstreamControllerResult `json:"controllerResults"`
}

type upstreamControllerResult struct {
	ControllerName string                `json:"controllerName"`
	Status         string                `json:"status"`
	Errors         []upstreamErrorDetail `json:"errors,omitempty"`
	PanicStack     string                `json:"panicStack,omitempty"`
}

type upstreamErrorDetail struct {
	Message string `json:"message"`
}

// upstreamMetadata is a metadata file as upstream parses it: unknown keys ignored, keys
// matched case-insensitively, the object name read from `mame:` only.
type upstreamMetadata struct {
	Action       string `json:"action"`
	ResourceType struct {
		Group, Version, Resource string
	} `json:"resourceType"`
	Namespace              string `json:"namespace,omitempty"`
	Name                   string `json:"mame"`
	GenerateName           string `json:"generateName"`
	PatchType              string `json:"patchType,omitempty"`
	FieldManager           string `json:"fieldManager,omitempty"`
	ControllerInstanceName string `json:"controllerInstanceName"`
}

// upstreamRequest is one recorded request as upstream compares it.
type upstreamRequest struct {
	meta                   upstreamMetadata
	kindGroup, kindVersion string
	kind                   string
	body, options          []byte
	bodyPath               string // relative to the output directory, for messages
	shownName              string // the name for messages: mame:, else name: (which upstream does not read)
	hasOptions             bool
	isEvent                bool
	lookupKey, equalityKey string
}

// upstreamOutput is an output directory as upstream reads it.
type upstreamOutput struct {
	results  *upstreamResults // nil when controller-results.yaml is absent or empty
	requests map[contract.Class][]upstreamRequest
}

// readUpstream reads dir as the upstream harness does. An error means upstream's reader
// reports one, which fails the test on either side.
func readUpstream(dir string) (*upstreamOutput, error) {
	fsys := os.DirFS(dir)
	out := &upstreamOutput{requests: map[contract.Class][]upstreamRequest{}}
	var errs []error
	data, err := fs.ReadFile(fsys, contract.ControllerResultsFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		errs = append(errs, err)
	}
	if len(data) > 0 {
		js, err := utilyaml.ToJSON(data)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", contract.ControllerResultsFile, err))
		} else {
			r := &upstreamResults{}
			if err := utiljson.Unmarshal(js, r); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", contract.ControllerResultsFile, err))
			} else {
				out.results = r
			}
		}
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	for _, class := range upstreamClasses {
		for _, action := range upstreamActions {
			root := path.Join(string(class), string(action))
			if _, err := fs.Stat(fsys, root); errors.Is(err, fs.ErrNotExist) {
				continue
			}
			reqs, err := readUpstreamAction(fsys, root, action)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", root, err))
			}
			out.requests[class] = append(out.requests[class], reqs...)
		}
	}
	for _, e := range entries {
		switch n := e.Name(); {
		case n == StdoutLog || n == StderrLog || n == contract.ControllerResultsFile:
		case e.IsDir() && slices.Contains(upstreamClasses, contract.Class(n)):
		default:
			errs = append(errs, fmt.Errorf("unexpected entry %q: only %v, %s and the logs may be there", n, upstreamClasses, contract.ControllerResultsFile))
		}
	}
	return out, errors.Join(errs...)
}

// readUpstreamAction reads the requests under one class's action folder; the first bad
// request stops the walk, as upstream's does.
func readUpstreamAction(fsys fs.FS, root string, action contract.Action) ([]upstreamRequest, error) {
	var reqs []upstreamRequest
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() || !(strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".json")) || !upstreamBody.MatchString(name) {
			return nil
		}
		dir := path.Dir(p)
		r := upstreamRequest{bodyPath: p}
		if r.body, err = fs.ReadFile(fsys, p); err != nil {
			return err
		}
		metaPath := path.Join(dir, strings.Replace(name, "body", "metadata", 1))
		meta, err := fs.ReadFile(fsys, metaPath)
		if err != nil {
			return fmt.Errorf("the metadata of %s: %w", p, err)
		}
		if err := yaml.Unmarshal(meta, &r.meta); err != nil {
			return fmt.Errorf("%s: %w", metaPath, err)
		}
		var spelled struct {
			Name string `json:"name"`
		}
		_ = yaml.Unmarshal(meta, &spelled)
		r.shownName = cmp.Or(r.meta.Name, spelled.Name)
		opts, err := fs.ReadFile(fsys, path.Join(dir, strings.Replace(name, "body", "options", 1)))
		switch {
		case err == nil:
			r.options, r.hasOptions = opts, true
		case !errors.Is(err, fs.ErrNotExist):
			return err
		}
		if action != contract.ActionPatch && action != contract.ActionPatchStatus {
			// The body must be an object with a kind; its kind counts only when it is YAML
			// that is not JSON (an upstream quirk: the JSON decoding path drops it).
			if _, _, jsonErr := unstructured.UnstructuredJSONScheme.Decode(r.body, nil, &unstructured.Unstructured{}); jsonErr != nil {
				js, err := yaml.YAMLToJSON(r.body)
				if err != nil {
					return fmt.Errorf("%s: not JSON (%v) nor YAML: %w", p, jsonErr, err)
				}
				obj, _, err := unstructured.UnstructuredJSONScheme.Decode(js, nil, &unstructured.Unstructured{})
				if err != nil {
					return fmt.Errorf("%s: %w", p, err)
				}
				gvk := obj.GetObjectKind().GroupVersionKind()
				r.kindGroup, r.kindVersion, r.kind = gvk.Group, gvk.Version, gvk.Kind
			}
		}
		rt := r.meta.ResourceType
		r.isEvent = rt.Resource == "events" && (rt.Group == "" || rt.Group == "events.k8s.io")
		m := r.meta
		r.lookupKey = strings.Join([]string{m.Action, m.PatchType, m.FieldManager, m.ControllerInstanceName, rt.Group, rt.Version, rt.Resource, m.Namespace, m.Name, m.GenerateName}, "\x00")
		// Absent and empty options compare equal, as upstream compares their bytes.
		r.equalityKey = strings.Join([]string{r.lookupKey, r.kindGroup, r.kindVersion, r.kind, string(r.body), string(r.options)}, "\x00")
		reqs = append(reqs, r)
		return nil
	})
	return reqs, err
}

// String names a request in messages.
func (r upstreamRequest) String() string {
	m := r.meta
	obj := r.shownName + m.GenerateName
	if m.Namespace != "" {
		obj = m.Namespace + "/" + obj
	}
	group := m.ResourceType.Group
	if group != "" {
		group = "." + group
	}
	s := fmt.Sprintf("%s %s%s %s", m.Action, m.ResourceType.Resource, group, obj)
	if m.ControllerInstanceName != "" {
		s += fmt.Sprintf(" by %q", m.ControllerInstanceName)
	}
	return s
}

// compareUpstream compares two output directories as upstream does: controller results
// parsed and deeply equal (order, absent versus empty lists, absent versus empty file all
// matter), then per class, without events, the requests as sets. It returns every
// difference; none means upstream passes.
func compareUpstream(expected, actual *upstreamOutput) []string {
	var diffs []string
	switch e, a := expected.results, actual.results; {
	case e == nil && a != nil:
		diffs = append(diffs, contract.ControllerResultsFile+" is absent or empty in the expected output but not in the actual one")
	case e != nil && a == nil:
		diffs = append(diffs, contract.ControllerResultsFile+" is absent or empty in the actual output but not in the expected one")
	case e != nil && !reflect.DeepEqual(e, a):
		ej, _ := json.MarshalIndent(e, "", "  ")
		aj, _ := json.MarshalIndent(a, "", "  ")
		d := unifiedDiff(ej, aj)
		if bytes.Equal(ej, aj) {
			d = "(an empty errors list on one side is absent on the other)"
		}
		diffs = append(diffs, contract.ControllerResultsFile+" differs (parsed):\n"+indent(d))
	}
	for _, class := range upstreamClasses {
		diffs = append(diffs, diffUpstreamClass(class, expected.requests[class], actual.requests[class])...)
	}
	return diffs
}

func diffUpstreamClass(class contract.Class, expected, actual []upstreamRequest) []string {
	index := func(rs []upstreamRequest) map[string]upstreamRequest {
		m := map[string]upstreamRequest{}
		for _, r := range rs {
			if !r.isEvent {
				m[r.equalityKey] = r
			}
		}
		return m
	}
	return setDiff[upstreamRequest]{
		order: func(a, b upstreamRequest) int { return cmp.Compare(a.equalityKey, b.equalityKey) },
		same:  func(e, a upstreamRequest) bool { return a.lookupKey == e.lookupKey },
		missing: func(e upstreamRequest) string {
			return fmt.Sprintf("%s: missing: %s (expected %s)", class, e, e.bodyPath)
		},
		differs: func(e, a upstreamRequest) string {
			var b strings.Builder
			if e.kind != a.kind || e.kindGroup != a.kindGroup || e.kindVersion != a.kindVersion {
				fmt.Fprintf(&b, "kind: expected %q, actual %q (a body in JSON has no kind for upstream)\n", e.kindGroup+"/"+e.kindVersion+"/"+e.kind, a.kindGroup+"/"+a.kindVersion+"/"+a.kind)
			}
			if !bytes.Equal(e.body, a.body) {
				b.WriteString("body:\n" + unifiedDiff(e.body, a.body))
			}
			if !bytes.Equal(e.options, a.options) {
				b.WriteString("options:\n" + unifiedDiff(e.options, a.options))
			}
			return fmt.Sprintf("%s: differs: %s (expected %s, actual %s):\n%s", class, e, e.bodyPath, a.bodyPath, indent(b.String()))
		},
		unexpected: func(a upstreamRequest) string {
			return fmt.Sprintf("%s: unexpected: %s (actual %s)", class, a, a.bodyPath)
		},
	}.diff(index(expected), index(actual))
}
