package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

func unmarshalPatch(body []byte, v any) error {
	if json.Valid(body) {
		return json.Unmarshal(body, v)
	}
	return yaml.Unmarshal(body, v)
}

// checkBody decodes a body and checks it against its metadata: object-bearing actions need an
// object of the metadata's group whose name, namespace and kind fit (it is returned, parsed);
// JSON patches are lists; merge patches are objects; Delete bodies are DeleteOptions.
func checkBody(md Metadata, body []byte, disc *Discovery) (*unstructured.Unstructured, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errors.New("empty body")
	}
	switch md.Action {
	case ActionPatch, ActionPatchStatus:
		if md.PatchType == PatchTypeJSON {
			var ops []map[string]any
			if err := unmarshalPatch(body, &ops); err != nil {
				return nil, fmt.Errorf("decode JSON patch: %w", err)
			}
			for i, op := range ops {
				if _, ok := op["op"].(string); !ok {
					return nil, fieldError(fmt.Sprintf("[%d].op", i), errors.New("required"))
				}
				if _, ok := op["path"].(string); !ok {
					return nil, fieldError(fmt.Sprintf("[%d].path", i), errors.New("required"))
				}
			}
			return nil, nil
		}
		var patch map[string]any
		if err := unmarshalPatch(body, &patch); err != nil {
			return nil, fmt.Errorf("decode %s: %w", md.PatchType, err)
		}
		return nil, nil
	case ActionDelete:
		var h struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(body, &h); err != nil {
			return nil, fmt.Errorf("decode DeleteOptions: %w", err)
		}
		if h.Kind != "DeleteOptions" {
			return nil, fieldError("kind", fmt.Errorf("%q, but a Delete body is a DeleteOptions", h.Kind))
		}
		return nil, nil
	}
	m, err := ParseObject(body)
	if err != nil {
		return nil, fmt.Errorf("decode body: %w", err)
	}
	obj := &unstructured.Unstructured{Object: m}
	return obj, checkObject(md, obj, disc)
}

// checkObject checks an object against its metadata: its group, namespace, name (or
// generateName) and kind.
func checkObject(md Metadata, obj *unstructured.Unstructured, disc *Discovery) error {
	var h struct{ apiVersion, kind, name, namespace, generateName string }
	var errs []error
	field := func(to *string, path ...string) {
		v, found, err := unstructured.NestedFieldNoCopy(obj.Object, path...)
		if !found || v == nil {
			return
		}
		s, ok := v.(string)
		if err != nil || !ok {
			errs = append(errs, fieldError(strings.Join(path, "."), fmt.Errorf("a %T, not a string", v)))
			return
		}
		*to = s
	}
	if meta, ok := obj.Object["metadata"]; ok && meta != nil {
		if _, ok := meta.(map[string]any); !ok {
			return fieldError("metadata", fmt.Errorf("a %T, not an object", meta))
		}
	}
	field(&h.apiVersion, "apiVersion")
	field(&h.kind, "kind")
	field(&h.name, "metadata", "name")
	field(&h.namespace, "metadata", "namespace")
	field(&h.generateName, "metadata", "generateName")
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	gv, err := schema.ParseGroupVersion(h.apiVersion)
	switch {
	case h.apiVersion == "":
		return fieldError("apiVersion", errors.New("required"))
	case err != nil:
		return fieldError("apiVersion", err)
	case h.kind == "":
		return fieldError("kind", errors.New("required"))
	case gv.Group != md.ResourceType.Group:
		return fieldError("apiVersion", fmt.Errorf("%q is not in group %q of the metadata", h.apiVersion, md.ResourceType.Group))
	case h.namespace != md.Namespace:
		return fieldError("metadata.namespace", fmt.Errorf("%q, but the metadata says %q", h.namespace, md.Namespace))
	case h.name != md.Name:
		return fieldError("metadata.name", fmt.Errorf("%q, but the metadata says %q", h.name, md.Name))
	case md.Name == "" && h.generateName != md.GenerateName:
		return fieldError("metadata.generateName", fmt.Errorf("%q, but the metadata says %q", h.generateName, md.GenerateName))
	}
	gvr := schema.GroupVersionResource{Group: md.ResourceType.Group, Version: gv.Version, Resource: md.ResourceType.Resource}
	if kind, ok := disc.KindFor(gvr); ok && kind != h.kind {
		return fieldError("kind", fmt.Errorf("%q, but %s holds %s objects", h.kind, gvr.GroupResource(), kind))
	}
	return nil
}

// ParseObjects parses the body of every object-bearing mutation of out that has no Object yet
// and checks it against its metadata, as the reader does: for directories built in memory.
func ParseObjects(out *OutputDir, disc *Discovery) error {
	if disc == nil {
		disc = DefaultDiscovery()
	}
	for i := range out.Mutations {
		m := &out.Mutations[i]
		if m.Object != nil || !m.Metadata.Action.CarriesObject() {
			continue
		}
		obj, err := checkBody(m.Metadata, m.Body, disc)
		if err != nil {
			return fileErr(m.Path, m.Identity().String(), "", err)
		}
		m.Object = obj
	}
	return nil
}

// CheckOutputDir checks an output directory that an operator built in memory (an in-process
// operator's) as ReadOutputDir checks one on disk, and prepares it as the reader would: every
// mutation of a known class, with valid metadata, a body that fits it (parsed into Object),
// options that decode, no two mutations on the same files, no file over opts.MaxFileSize and
// all of them within opts.MaxTotalSize (sizes as the writer would write them, metadata
// excluded); Path set to the body file the writer would write and the mutations sorted as the
// reader sorts them. Every problem is reported, each naming its file.
func CheckOutputDir(out *OutputDir, opts ReadOptions) error {
	opts = opts.withDefaults()
	var errs []error
	fail := func(file, object, field string, err error) {
		if len(errs) < maxReportedErrors {
			errs = append(errs, fileErr(file, object, field, err))
		}
	}
	if out == nil {
		return errors.New("no output directory")
	}
	seen := map[string]bool{}
	var total int64
	for i := range out.Mutations {
		m := &out.Mutations[i]
		body, _, options := MutationFiles(m)
		m.Path = path.Join(string(m.Class), body)
		obj := m.Identity().String()
		if !m.Class.Valid() {
			fail(m.Path, obj, "", fmt.Errorf("class %q is not one of %v", m.Class, classes))
			continue
		}
		if seen[m.Path] {
			fail(m.Path, obj, "", errors.New("a second mutation on the same files"))
			continue
		}
		seen[m.Path] = true
		if err := m.Metadata.Validate(); err != nil {
			fail(m.Path, obj, "", fmt.Errorf("metadata: %w", err))
			continue
		}
		for _, f := range []struct {
			name string
			size int64
		}{{m.Path, int64(len(m.Body))}, {path.Join(string(m.Class), options), int64(len(m.Options))}} {
			total += f.size
			switch {
			case f.size > opts.MaxFileSize:
				fail(f.name, obj, "", fmt.Errorf("%d bytes, over the limit of %d", f.size, opts.MaxFileSize))
			case opts.MaxTotalSize > 0 && total > opts.MaxTotalSize:
				fail(f.name, obj, "", fmt.Errorf("the output is over its limit of %d bytes", opts.MaxTotalSize))
			}
		}
		// The body is what the operator wrote; an Object it set beside it is not trusted.
		parsed, err := checkBody(m.Metadata, m.Body, opts.Discovery)
		if err != nil {
			fail(m.Path, obj, "", err)
			continue
		}
		m.Object = parsed
		if len(m.Options) > 0 {
			var decoded map[string]any
			if err := yaml.Unmarshal(m.Options, &decoded); err != nil {
				fail(path.Join(string(m.Class), options), obj, "", fmt.Errorf("decode options: %w", err))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	sortMutations(out.Mutations)
	return nil
}
