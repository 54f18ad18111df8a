package contract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// InputObject is one object of an input directory and where it was found.
type InputObject struct {
	// Group and Resource come from the object's folder; Namespace too ("" for cluster-scoped).
	Group, Resource, Namespace string
	// Object is the decoded object.
	Object *unstructured.Unstructured
	// File is the file it was read from, relative to the input directory.
	File string
	// InList is true when the object was an item of a list file.
	InList bool
}

// Identity returns the object's identity; the version is its apiVersion's.
func (o *InputObject) Identity() Identity {
	gv, _ := schema.ParseGroupVersion(o.Object.GetAPIVersion())
	return Identity{Group: o.Group, Version: gv.Version, Resource: o.Resource, Namespace: o.Namespace, Name: o.Object.GetName()}
}

// scopeKey names one resource folder: a group, a resource, and a namespace ("" for cluster).
type scopeKey struct{ group, resource, namespace string }

// InputDir is a must-gather-like input directory, read whole and answering GET and LIST
// the way the contract's fake API server does (see the package documentation).
type InputDir struct {
	// Discovery is the directory's own discovery, or DefaultDiscovery() when it has none.
	Discovery *Discovery
	// HasDiscovery is true when the directory carried its own discovery files.
	HasDiscovery bool

	objects    []*InputObject
	lists      map[scopeKey][]*InputObject // items of <resource>.yaml list files
	perObject  map[scopeKey][]*InputObject // <resource>/<name>.yaml files
	namespaces map[string]*InputObject     // namespaces/<ns>/<ns>.yaml
}

// Objects returns every object of the directory, sorted by file then position.
func (d *InputDir) Objects() []*InputObject { return d.objects }

// ReadInputDir reads and checks a whole input directory: only the discovery files,
// cluster-scoped-resources/ and namespaces/ at the top; list files `<group>/<resource>.yaml`
// and per-object files `<group>/<resource>/<name>.yaml` below them; every object with an
// apiVersion of its folder's group, a kind and a name (matching its file name, for per-object
// files); no links, special files or oversized files. Every problem is reported, each naming
// its file.
func ReadInputDir(dir string, opts ReadOptions) (*InputDir, error) {
	r, err := newTreeReader(context.Background(), dir, opts)
	if err != nil {
		return nil, err
	}
	defer r.root.Close()
	d := &InputDir{
		lists:      map[scopeKey][]*InputObject{},
		perObject:  map[scopeKey][]*InputObject{},
		namespaces: map[string]*InputObject{},
	}
	ir := &inputReader{treeReader: r, d: d}

	entries, err := fs.ReadDir(r.fsys, ".")
	if err != nil {
		return nil, fileErr(dir, "", "", err)
	}
	var discoveryDocs [][]byte
	for _, e := range entries {
		name := e.Name()
		switch name {
		case DiscoveryCoreFile, DiscoveryGroupsFile:
			if data, ok := r.readFile(name, e); ok {
				if _, err := ParseDiscovery(data); err != nil {
					r.fail(name, "", "", err)
					continue
				}
				discoveryDocs = append(discoveryDocs, data)
			}
		case clusterScopedDir:
			if r.checkDir(name, e) {
				ir.readGroupDirs(name, "")
			}
		case namespacesDir:
			if r.checkDir(name, e) {
				ir.readNamespaces(name)
			}
		default:
			r.fail(name, "", "", fmt.Errorf("unexpected entry: an input directory holds only %s, %s, %s and %s", clusterScopedDir, namespacesDir, DiscoveryCoreFile, DiscoveryGroupsFile))
		}
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	if len(discoveryDocs) > 0 {
		d.Discovery, _ = ParseDiscovery(discoveryDocs...)
		d.HasDiscovery = true
	} else {
		d.Discovery = r.opts.Discovery
	}
	return d, nil
}

type inputReader struct {
	*treeReader
	d *InputDir
}

func (ir *inputReader) readNamespaces(dir string) {
	for _, ns := range ir.subdirs(dir) {
		nsDir := path.Join(dir, ns.Name())
		for _, e := range ir.readDir(nsDir) {
			rel := path.Join(nsDir, e.Name())
			if e.Name() == ns.Name()+".yaml" {
				if obj := ir.readObjectFile(rel, e, "", "namespaces", ""); obj != nil {
					if obj.Object.GetName() != ns.Name() {
						ir.fail(rel, "", "metadata.name", fmt.Errorf("%q, but the file is the Namespace object of %q", obj.Object.GetName(), ns.Name()))
						continue
					}
					ir.d.namespaces[ns.Name()] = obj
					ir.d.objects = append(ir.d.objects, obj)
				}
				continue
			}
			if ir.checkDir(rel, e) {
				ir.readResources(rel, groupFromDir(e.Name()), ns.Name())
			}
		}
	}
}

// readGroupDirs reads the group folders below dir for one namespace ("" for cluster scope).
func (ir *inputReader) readGroupDirs(dir, namespace string) {
	for _, g := range ir.subdirs(dir) {
		ir.readResources(path.Join(dir, g.Name()), groupFromDir(g.Name()), namespace)
	}
}

// readResources reads one group folder: list files and per-object folders.
func (ir *inputReader) readResources(dir, group, namespace string) {
	for _, e := range ir.readDir(dir) {
		rel := path.Join(dir, e.Name())
		if e.IsDir() {
			ir.readPerObject(rel, group, e.Name(), namespace)
			continue
		}
		resource, ok := strings.CutSuffix(e.Name(), ".yaml")
		if !ok || resource == "" {
			ir.fail(rel, "", "", errors.New("unexpected file: a group folder holds <resource>.yaml list files and <resource>/ folders"))
			continue
		}
		ir.readListFile(rel, e, group, resource, namespace)
	}
}

func (ir *inputReader) readPerObject(dir, group, resource, namespace string) {
	key := scopeKey{group, resource, namespace}
	for _, e := range ir.readDir(dir) {
		rel := path.Join(dir, e.Name())
		obj := ir.readObjectFile(rel, e, group, resource, namespace)
		if obj == nil {
			continue
		}
		stem := strings.TrimSuffix(strings.TrimSuffix(e.Name(), ".yaml"), ".json")
		if obj.Object.GetName() != stem {
			ir.fail(rel, "", "metadata.name", fmt.Errorf("%q, but the file is named for %q", obj.Object.GetName(), stem))
			continue
		}
		ir.d.perObject[key] = append(ir.d.perObject[key], obj)
		ir.d.objects = append(ir.d.objects, obj)
	}
}

func (ir *inputReader) readObjectFile(rel string, e fs.DirEntry, group, resource, namespace string) *InputObject {
	u, ok := readParsed(ir.treeReader, rel, e, decodeObject)
	if !ok {
		return nil
	}
	if u.IsList() {
		ir.fail(rel, "", "kind", fmt.Errorf("%q is a list; per-object files hold one object", u.GetKind()))
		return nil
	}
	obj := &InputObject{Group: group, Resource: resource, Namespace: namespace, Object: u, File: rel}
	if err := checkInputObject(obj, true); err != nil {
		ir.fail(rel, "", "", err)
		return nil
	}
	return obj
}

func (ir *inputReader) readListFile(rel string, e fs.DirEntry, group, resource, namespace string) {
	u, ok := readParsed(ir.treeReader, rel, e, decodeObject)
	if !ok {
		return
	}
	if !strings.HasSuffix(u.GetKind(), "List") {
		ir.fail(rel, "", "kind", fmt.Errorf("%q is not a list; <resource>.yaml files hold lists", u.GetKind()))
		return
	}
	if items, ok := u.Object["items"]; ok && items == nil {
		delete(u.Object, "items") // `items:` with nothing after it is an empty list
	}
	list, err := u.ToList()
	if err != nil {
		ir.fail(rel, "", "items", err)
		return
	}
	key := scopeKey{group, resource, namespace}
	if ir.d.lists[key] == nil { // an empty list file still decides how LIST answers
		ir.d.lists[key] = []*InputObject{}
	}
	for i := range list.Items {
		item := &list.Items[i]
		if item.GetKind() == "" {
			item.SetKind(strings.TrimSuffix(u.GetKind(), "List"))
		}
		if item.GetAPIVersion() == "" {
			item.SetAPIVersion(u.GetAPIVersion())
		}
		obj := &InputObject{Group: group, Resource: resource, Namespace: namespace, Object: item, File: rel, InList: true}
		if err := checkInputObject(obj, false); err != nil {
			ir.fail(rel, "", fmt.Sprintf("items[%d]", i), err)
			continue
		}
		ir.d.lists[key] = append(ir.d.lists[key], obj)
		ir.d.objects = append(ir.d.objects, obj)
	}
}

// decodeObject decodes one YAML or JSON object (a leading `---` is fine).
func decodeObject(data []byte) (*unstructured.Unstructured, error) {
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if m == nil {
		return nil, errors.New("decode: empty document")
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// checkInputObject checks an object against its folder. Items of list files (perObject false)
// may lack a name and a namespace, as real must-gathers show: LIST returns them, GET never
// finds them.
func checkInputObject(o *InputObject, perObject bool) error {
	u := o.Object
	gv, err := schema.ParseGroupVersion(u.GetAPIVersion())
	switch {
	case u.GetAPIVersion() == "":
		return fieldError("apiVersion", errors.New("required"))
	case err != nil:
		return fieldError("apiVersion", err)
	case gv.Group != o.Group:
		return fieldError("apiVersion", fmt.Errorf("%q is not in the folder's group %q", u.GetAPIVersion(), o.Group))
	case u.GetKind() == "":
		return fieldError("kind", errors.New("required"))
	case perObject && u.GetName() == "":
		return fieldError("metadata.name", errors.New("required"))
	case o.Resource == "namespaces" && o.Group == "":
		if u.GetNamespace() != "" {
			return fieldError("metadata.namespace", errors.New("a Namespace object has no namespace"))
		}
	case u.GetNamespace() != o.Namespace && (perObject || u.GetNamespace() != ""):
		return fieldError("metadata.namespace", fmt.Errorf("%q, but the file is in the folder of namespace %q", u.GetNamespace(), o.Namespace))
	}
	return nil
}

// Get returns one object as the contract's fake API server would: the per-object file first,
// then the matching item of the list file. Namespaces are read from namespaces/<ns>/<ns>.yaml
// (or namespaces/<ns>/core/namespaces.yaml). The object's apiVersion must be the requested
// group/version. The result is a copy; a missing object is a NotFound error.
func (d *InputDir) Get(gvr schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	if gvr.Group == "" && gvr.Resource == "namespaces" {
		if o, ok := d.namespaces[name]; ok {
			return checkVersion(o, gvr)
		}
		for _, o := range d.lists[scopeKey{"", "namespaces", name}] {
			if o.Object.GetName() == name {
				return checkVersion(o, gvr)
			}
		}
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	key := scopeKey{gvr.Group, gvr.Resource, namespace}
	for _, o := range d.perObject[key] {
		if o.Object.GetName() == name {
			return checkVersion(o, gvr)
		}
	}
	for _, o := range d.lists[key] {
		if o.Object.GetName() == name {
			return checkVersion(o, gvr)
		}
	}
	return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
}

func checkVersion(o *InputObject, gvr schema.GroupVersionResource) (*unstructured.Unstructured, error) {
	if want := gvr.GroupVersion().String(); o.Object.GetAPIVersion() != want {
		return nil, apierrors.NewInternalError(fmt.Errorf("%s: apiVersion %q, but %s was requested", o.File, o.Object.GetAPIVersion(), want))
	}
	return o.Object.DeepCopy(), nil
}

// List returns the objects of a resource in one namespace ("" for all namespaces, or for a
// cluster-scoped resource) that match selector (nil matches everything), as the contract's
// fake API server would: when any candidate list file exists, only list files are read,
// everywhere; otherwise the per-object files. Objects are returned as copies, sorted by
// namespace and name.
func (d *InputDir) List(gvr schema.GroupVersionResource, namespace string, selector labels.Selector) []*unstructured.Unstructured {
	if selector == nil {
		selector = labels.Everything()
	}
	if gvr.Group == "" && gvr.Resource == "namespaces" {
		var out []*unstructured.Unstructured
		for _, ns := range slices.Sorted(maps.Keys(d.namespaces)) {
			if o := d.namespaces[ns]; selector.Matches(labels.Set(o.Object.GetLabels())) {
				out = append(out, o.Object.DeepCopy())
			}
		}
		return out
	}
	matches := func(key scopeKey) bool {
		return key.group == gvr.Group && key.resource == gvr.Resource && (namespace == "" || key.namespace == namespace)
	}
	source := d.perObject
	for key := range d.lists {
		if matches(key) {
			source = d.lists
			break
		}
	}
	var objs []*InputObject
	for key, items := range source {
		if matches(key) {
			objs = append(objs, items...)
		}
	}
	sort.SliceStable(objs, func(i, j int) bool {
		if objs[i].Namespace != objs[j].Namespace {
			return objs[i].Namespace < objs[j].Namespace
		}
		return objs[i].Object.GetName() < objs[j].Object.GetName()
	})
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		if selector.Matches(labels.Set(o.Object.GetLabels())) {
			out = append(out, o.Object.DeepCopy())
		}
	}
	return out
}

// WriteInputDir writes objects as an input directory in list form, the form the contract's
// pruner writes: one `<group>/<resource>.yaml` list per resource and namespace, and each
// Namespace object as namespaces/<ns>/<ns>.yaml, where the reader looks for it. dir must be
// empty or absent. Every object needs a group, a resource and a name; all objects of one list
// must share an apiVersion.
func WriteInputDir(dir string, objs []*InputObject) error {
	layout, err := layoutInputDir(objs)
	if err != nil {
		return err
	}
	files := make([]File, 0, len(layout))
	var errs []error
	for _, f := range layout {
		var doc any
		if f.list {
			raw := make([]any, 0, len(f.objects))
			for _, it := range f.objects {
				raw = append(raw, it.Object.Object)
			}
			first := f.objects[0].Object
			doc = map[string]any{"apiVersion": first.GetAPIVersion(), "kind": first.GetKind() + "List", "metadata": map[string]any{}, "items": raw}
		} else {
			doc = f.objects[0].Object.Object
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.path, err))
			continue
		}
		files = append(files, File{Path: f.path, Data: data})
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return WriteFiles(dir, files)
}

// NewInputDir is the input directory that ReadInputDir would read from the directory
// WriteInputDir writes of objs, made in memory: the same objects (copies), in the same files,
// answering GET and LIST alike, with disc as its discovery (nil: DefaultDiscovery(), as for a
// directory without discovery files). It is how an in-process operator reads its inputs
// without a directory on disk.
func NewInputDir(objs []*InputObject, disc *Discovery) (*InputDir, error) {
	layout, err := layoutInputDir(objs)
	if err != nil {
		return nil, err
	}
	if disc == nil {
		disc = DefaultDiscovery()
	}
	d := &InputDir{
		Discovery:  disc,
		lists:      map[scopeKey][]*InputObject{},
		perObject:  map[scopeKey][]*InputObject{},
		namespaces: map[string]*InputObject{},
	}
	var errs []error
	for _, f := range layout {
		for i, o := range f.objects {
			obj, err := readBack(o.Object.Object)
			if err != nil {
				errs = append(errs, fileErr(f.path, o.Identity().String(), "", err))
				continue
			}
			c := &InputObject{Group: o.Group, Resource: o.Resource, Namespace: o.Namespace, Object: &unstructured.Unstructured{Object: obj}, File: f.path, InList: f.list}
			if err := checkInputObject(c, !f.list); err != nil {
				field := ""
				if f.list {
					field = fmt.Sprintf("items[%d]", i)
				}
				errs = append(errs, fileErr(f.path, c.Identity().String(), field, err))
				continue
			}
			if f.list {
				key := scopeKey{c.Group, c.Resource, c.Namespace}
				d.lists[key] = append(d.lists[key], c)
			} else {
				d.namespaces[c.Object.GetName()] = c
			}
			d.objects = append(d.objects, c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return d, nil
}

// readBack copies an object as writing it to a file and reading it back would: the reader
// decodes JSON values, so every number is a float64 and every map a map[string]any, whatever
// Go types the caller held (an informer's object converted to unstructured holds int64s; code
// that builds objects may hold ints, which a deep copy refuses). Values JSON cannot hold are
// an error, as they would be for the writer.
func readBack(obj map[string]any) (map[string]any, error) {
	v, err := readBackValue(obj)
	if err != nil {
		return nil, err
	}
	return v.(map[string]any), nil
}

func readBackValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, float64:
		return v, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			c, err := readBackValue(e)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := readBackValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int64:
		return float64(v), nil
	case int:
		return float64(v), nil
	case int32:
		return float64(v), nil
	}
	// Anything else (typed slices or maps, other numbers): through JSON, as the writer
	// would write it and the reader read it.
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// inputFile is one file of an input directory in list form: a list of objects of one
// resource in one namespace, or one Namespace object.
type inputFile struct {
	path    string
	list    bool
	objects []*InputObject
}

// layoutInputDir places objects in the files of an input directory in list form, sorted by
// path, each list sorted by name: the layout WriteInputDir writes and NewInputDir holds.
func layoutInputDir(objs []*InputObject) ([]inputFile, error) {
	lists := map[scopeKey][]*InputObject{}
	var files []inputFile
	var errs []error
	for _, o := range objs {
		id := o.Identity()
		if err := ValidateIdentity(id); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		if id.IsNamespace() {
			files = append(files, inputFile{path: path.Join(namespacesDir, id.Name, id.Name+".yaml"), objects: []*InputObject{o}})
			continue
		}
		key := scopeKey{o.Group, o.Resource, o.Namespace}
		lists[key] = append(lists[key], o)
	}
	for _, key := range slices.SortedFunc(maps.Keys(lists), compareScope) {
		items := lists[key]
		sort.SliceStable(items, func(i, j int) bool { return items[i].Object.GetName() < items[j].Object.GetName() })
		apiVersion, kind := items[0].Object.GetAPIVersion(), items[0].Object.GetKind()
		kept := items[:0:0]
		for _, it := range items {
			if it.Object.GetAPIVersion() != apiVersion || it.Object.GetKind() != kind {
				errs = append(errs, fmt.Errorf("%s: %s %s in a list of %s %s", it.Identity(), it.Object.GetAPIVersion(), it.Object.GetKind(), apiVersion, kind))
				continue
			}
			kept = append(kept, it)
		}
		p := path.Join(clusterScopedDir, GroupDir(key.group), key.resource+".yaml")
		if key.namespace != "" {
			p = path.Join(namespacesDir, key.namespace, GroupDir(key.group), key.resource+".yaml")
		}
		files = append(files, inputFile{path: p, list: true, objects: kept})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// Sorted as ReadInputDir walks a directory, one sorted folder at a time: by path
	// segments, so that namespaces/a/ comes before namespaces/a-b/ as it does there.
	slices.SortStableFunc(files, func(a, b inputFile) int {
		return slices.Compare(strings.Split(a.path, "/"), strings.Split(b.path, "/"))
	})
	return files, nil
}

func compareScope(a, b scopeKey) int {
	return strings.Compare(a.namespace+"\x00"+a.group+"\x00"+a.resource, b.namespace+"\x00"+b.group+"\x00"+b.resource)
}
