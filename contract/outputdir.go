package contract

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// Top-level files of an output directory.
const (
	ControllerResultsFile = "controller-results.yaml"
	stdoutLog             = "stdout.log"
	stderrLog             = "stderr.log"
)

// DefaultMaxFileSize bounds every file a reader opens, so a runaway operator cannot make
// topolayer read gigabytes.
const DefaultMaxFileSize = 16 << 20

// DefaultMaxOutputSize bounds the total size of the files of one output directory: what
// `topolayer run` accepts from one operator run (config's operators[].limits.outputSize
// defaults to it) and what the command line reads with ReadOptions.MaxTotalSize.
const DefaultMaxOutputSize = 64 << 20

// maxReportedErrors caps how many problems one read reports; the rest are counted.
const maxReportedErrors = 50

// OutputDir is an apply-configuration output directory: the mutations under each class folder
// and controller-results.yaml.
type OutputDir struct {
	// ControllerResults is the parsed controller-results.yaml; nil when the file held `null`
	// or was absent (see HasControllerResults).
	ControllerResults *ControllerResults
	// HasControllerResults records whether controller-results.yaml was present.
	HasControllerResults bool
	// Mutations are sorted by class (Configuration, Management, UserWorkload, Unspecified)
	// then by path, which is the order of a directory walk.
	Mutations []Mutation
}

// ReadOptions tunes a reader. The zero value is ready to use.
type ReadOptions struct {
	// MaxFileSize bounds the size of every file; 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxTotalSize bounds the total size of the files read; 0 means no bound. The reader
	// stops at the file that passes it and names that file. DefaultMaxOutputSize is the
	// bound of `topolayer run` and of the command line.
	MaxTotalSize int64
	// Discovery maps resources to kinds, to check that a body's kind fits its folder. Nil
	// means DefaultDiscovery(); resources unknown to it are not checked.
	Discovery *Discovery
}

func (o ReadOptions) withDefaults() ReadOptions {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	if o.Discovery == nil {
		o.Discovery = DefaultDiscovery()
	}
	return o
}

// ReadOutputDir reads a whole output directory and checks it: only the class folders,
// controller-results.yaml and the harness's logs at the top; only known action folders; every
// body with a metadata file and every metadata file with a body; metadata that agrees with the
// folder it is in and the body it describes; no symbolic links, no special files, no file over
// the size limit. Every problem is reported, each naming its file; on any problem the result
// is nil.
func ReadOutputDir(dir string, opts ReadOptions) (*OutputDir, error) {
	return ReadOutputDirContext(context.Background(), dir, opts)
}

// ReadOutputDirContext is ReadOutputDir, stopping with ctx's error before the next file once
// ctx is done.
func ReadOutputDirContext(ctx context.Context, dir string, opts ReadOptions) (*OutputDir, error) {
	var ms []Mutation
	out, err := WalkOutputDir(ctx, dir, opts, func(m *Mutation) error {
		ms = append(ms, *m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Mutations = ms
	sortMutations(out.Mutations)
	return out, nil
}

// WalkOutputDir reads dir as ReadOutputDirContext does, but hands each mutation to visit as
// soon as it is read and checked, in the order the reader meets them (not sorted), and keeps
// none: the returned OutputDir has no Mutations. A reader of a large directory holds one
// mutation at a time. visit's first error stops the walk and is returned; so is the reader's
// error when a file is malformed, after visit has seen the mutations read before it, so a
// caller must not publish what it made of them until WalkOutputDir returns nil.
func WalkOutputDir(ctx context.Context, dir string, opts ReadOptions, visit func(*Mutation) error) (*OutputDir, error) {
	r, err := newTreeReader(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.visit = visit

	out := &OutputDir{}
	entries, err := fs.ReadDir(r.fsys, ".")
	if err != nil {
		return nil, fileErr(dir, "", "", err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case Class(name).Valid():
			if r.checkDir(name, e) {
				r.readActions(name, Class(name))
			}
		case name == ControllerResultsFile:
			data, ok := r.readFile(name, e)
			if !ok {
				continue
			}
			res, err := ParseControllerResults(data)
			if err != nil {
				r.fail(name, "", "", err)
				continue
			}
			out.ControllerResults, out.HasControllerResults = res, true
		case name == stdoutLog || name == stderrLog:
			r.checkRegular(name, e)
		default:
			r.fail(name, "", "", fmt.Errorf("unexpected entry: an output directory holds only %v, %s, %s and %s", classes, ControllerResultsFile, stdoutLog, stderrLog))
		}
	}
	if r.visitErr != nil {
		return nil, r.visitErr
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadActionTree reads one folder of `<Action>/...` trees, such as a single class folder or a
// target folder of a translated directory, and returns its mutations with Class set to class.
func ReadActionTree(dir string, class Class, opts ReadOptions) ([]Mutation, error) {
	r, err := newTreeReader(context.Background(), dir, opts)
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.readActions(".", class)
	if err := r.err(); err != nil {
		return nil, err
	}
	sortMutations(r.mutations)
	return r.mutations, nil
}

func sortMutations(ms []Mutation) {
	sort.SliceStable(ms, func(i, j int) bool {
		ci, cj := slices.Index(classes, ms[i].Class), slices.Index(classes, ms[j].Class)
		if ci != cj {
			return ci < cj
		}
		return ms[i].Path < ms[j].Path
	})
}

// treeReader walks one directory through an os.Root, so no path it reads can leave it.
type treeReader struct {
	ctx       context.Context
	stopped   error // the context's error, or the total size passed: read no further
	total     int64 // bytes read so far
	dir       string
	root      *os.Root
	fsys      fs.FS
	opts      ReadOptions
	errs      []error
	dropped   int
	mutations []Mutation
	// dir and dirRoot are the folder the last file was read from and a root opened on it:
	// the files of one mutation folder are read through it, so that each read resolves one
	// name, not the whole path again.
	lastDir string
	dirRoot *os.Root
	// visit, when set, receives each mutation instead of mutations; its first error stops
	// the reader.
	visit    func(*Mutation) error
	visitErr error
}

// close closes the roots the reader opened.
func (r *treeReader) close() {
	if r.dirRoot != nil {
		r.dirRoot.Close()
	}
	r.root.Close()
}

// rootOf returns a root opened on the folder rel is in, and rel's name in it.
func (r *treeReader) rootOf(rel string) (*os.Root, string, error) {
	dir, name := path.Split(rel)
	if dir == "" {
		return r.root, name, nil
	}
	if r.dirRoot == nil || dir != r.lastDir {
		if r.dirRoot != nil {
			r.dirRoot.Close()
			r.dirRoot = nil
		}
		sub, err := r.root.OpenRoot(dir)
		if err != nil {
			return nil, "", err
		}
		r.dirRoot, r.lastDir = sub, dir
	}
	return r.dirRoot, name, nil
}

func newTreeReader(ctx context.Context, dir string, opts ReadOptions) (*treeReader, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, fileErr(dir, "", "", err)
	}
	if !fi.IsDir() {
		return nil, fileErr(dir, "", "", errors.New("not a directory"))
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fileErr(dir, "", "", err)
	}
	return &treeReader{ctx: ctx, dir: dir, root: root, fsys: root.FS(), opts: opts.withDefaults()}, nil
}

func (r *treeReader) fail(rel, object, field string, err error) {
	if errors.Is(err, errStopped) {
		return
	}
	if len(r.errs) >= maxReportedErrors {
		r.dropped++
		return
	}
	r.errs = append(r.errs, fileErr(path.Join(r.dir, rel), object, field, err))
}

func (r *treeReader) err() error {
	if errors.Is(r.stopped, context.Canceled) || errors.Is(r.stopped, context.DeadlineExceeded) {
		return fmt.Errorf("read %s: %w", r.dir, r.stopped)
	}
	if r.dropped > 0 {
		r.errs = append(r.errs, fmt.Errorf("%s: %d more problems not shown", r.dir, r.dropped))
	}
	return errors.Join(r.errs...)
}

// checkDir accepts a real directory and rejects links and files.
func (r *treeReader) checkDir(rel string, e fs.DirEntry) bool {
	switch {
	case e.Type()&fs.ModeSymlink != 0:
		r.fail(rel, "", "", errors.New("symbolic links are not followed"))
	case !e.IsDir():
		r.fail(rel, "", "", errors.New("expected a directory"))
	default:
		return true
	}
	return false
}

// checkRegular accepts a regular file and rejects links, directories, pipes and devices.
func (r *treeReader) checkRegular(rel string, e fs.DirEntry) bool {
	switch t := e.Type(); {
	case t&fs.ModeSymlink != 0:
		r.fail(rel, "", "", errors.New("symbolic links are not followed"))
	case e.IsDir():
		r.fail(rel, "", "", errors.New("expected a file, found a directory"))
	case !t.IsRegular():
		r.fail(rel, "", "", fmt.Errorf("not a regular file (%s)", t))
	default:
		return true
	}
	return false
}

// readFile reads one regular file, bounded by the size limit.
func (r *treeReader) readFile(rel string, e fs.DirEntry) ([]byte, bool) {
	if !r.checkRegular(rel, e) {
		return nil, false
	}
	data, err := r.read(rel)
	if err != nil {
		r.fail(rel, "", "", err)
		return nil, false
	}
	return data, true
}

// errStopped marks a read skipped after the reader stopped; it is never reported.
var errStopped = errors.New("stopped")

// read reads one file inside the root, bounded by the size limits, unless the context is
// done or the total size was passed.
func (r *treeReader) read(rel string) ([]byte, error) {
	if r.stopped == nil {
		r.stopped = r.ctx.Err()
	}
	if r.stopped != nil {
		return nil, errStopped
	}
	root, name, err := r.rootOf(rel)
	if err != nil {
		return nil, err
	}
	data, err := readLimited(root, name, r.opts.MaxFileSize)
	if err != nil {
		return nil, err
	}
	r.total += int64(len(data))
	if max := r.opts.MaxTotalSize; max > 0 && r.total > max {
		r.stopped = fmt.Errorf("the directory holds more than the limit of %d bytes in total; stopped reading at this file", max)
		return nil, r.stopped
	}
	return data, nil
}

// readLimited reads a file inside root, refusing files larger than limit.
func readLimited(root *os.Root, rel string, limit int64) ([]byte, error) {
	f, err := root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%d bytes, larger than the limit of %d", fi.Size(), limit)
	}
	// The buffer holds the size Stat gave and one byte more, to see the end: a file read
	// whole neither grows it nor leaves it the slack of a growing buffer (a bytes.Buffer's
	// MinRead doubled a small file's memory, and a planner holds some mutations' files until
	// the plan ends). A file that grew since Stat is read on, up to the limit.
	data := make([]byte, fi.Size()+1)
	n, err := io.ReadFull(f, data)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		data = data[:n]
	case err != nil:
		return nil, err
	default:
		buf := bytes.NewBuffer(data)
		if _, err := buf.ReadFrom(io.LimitReader(f, limit+1-int64(len(data)))); err != nil {
			return nil, err
		}
		data = buf.Bytes()
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("larger than the limit of %d bytes", limit)
	}
	return data, nil
}

// readActions reads every action folder below base.
func (r *treeReader) readActions(base string, class Class) {
	entries, err := fs.ReadDir(r.fsys, base)
	if err != nil {
		r.fail(base, "", "", err)
		return
	}
	for _, e := range entries {
		rel := path.Join(base, e.Name())
		if !Action(e.Name()).Valid() {
			r.fail(rel, "", "", fmt.Errorf("unknown action folder %q (want one of %v)", e.Name(), actions))
			continue
		}
		if r.checkDir(rel, e) {
			r.readScopes(rel, class, Action(e.Name()))
		}
	}
}

// readScopes reads `cluster-scoped-resources/<group>/<resource>` and
// `namespaces/<ns>/<group>/<resource>` below one action folder.
func (r *treeReader) readScopes(actionDir string, class Class, action Action) {
	for _, e := range r.subdirs(actionDir) {
		rel := path.Join(actionDir, e.Name())
		switch e.Name() {
		case clusterScopedDir:
			r.readGroups(rel, class, action, "")
		case namespacesDir:
			for _, ns := range r.subdirs(rel) {
				r.readGroups(path.Join(rel, ns.Name()), class, action, ns.Name())
			}
		default:
			r.fail(rel, "", "", fmt.Errorf("unexpected folder: an action folder holds only %s and %s", clusterScopedDir, namespacesDir))
		}
	}
}

func (r *treeReader) readGroups(dir string, class Class, action Action, namespace string) {
	for _, g := range r.subdirs(dir) {
		gdir := path.Join(dir, g.Name())
		for _, res := range r.subdirs(gdir) {
			r.readResourceDir(path.Join(gdir, res.Name()), class, action, Identity{
				Group: groupFromDir(g.Name()), Resource: res.Name(), Namespace: namespace,
			})
		}
	}
}

// subdirs lists the entries of dir, all of which must be directories.
func (r *treeReader) subdirs(dir string) []fs.DirEntry {
	entries, err := fs.ReadDir(r.fsys, dir)
	if err != nil {
		r.fail(dir, "", "", err)
		return nil
	}
	out := entries[:0:0]
	for _, e := range entries {
		if r.checkDir(path.Join(dir, e.Name()), e) {
			out = append(out, e)
		}
	}
	return out
}

// record collects the up to three files of one mutation.
type record struct {
	prefix, name string
	files        map[fileKind]string
}

// readResourceDir pairs body, metadata and options files in one resource folder and reads each
// mutation. where carries the group, resource and namespace that the folder path implies.
func (r *treeReader) readResourceDir(dir string, class Class, action Action, where Identity) {
	entries, err := fs.ReadDir(r.fsys, dir)
	if err != nil {
		r.fail(dir, "", "", err)
		return
	}
	records := map[string]*record{}
	var keys []string
	for _, e := range entries {
		rel := path.Join(dir, e.Name())
		if !r.checkRegular(rel, e) {
			continue
		}
		pf, err := parseFileName(e.Name())
		if err != nil {
			r.fail(rel, "", "", err)
			continue
		}
		key := pf.prefix + "\x00" + pf.name
		rec, ok := records[key]
		if !ok {
			rec = &record{prefix: pf.prefix, name: pf.name, files: map[fileKind]string{}}
			records[key] = rec
			keys = append(keys, key)
		}
		if prev, dup := rec.files[pf.kind]; dup {
			r.fail(rel, "", "", fmt.Errorf("a second %s file for the same mutation (first: %s)", pf.kind, path.Base(prev)))
			continue
		}
		rec.files[pf.kind] = rel
	}
	for _, key := range keys {
		rec := records[key]
		body, hasBody := rec.files[kindBody]
		meta, hasMeta := rec.files[kindMetadata]
		switch {
		case !hasBody && !hasMeta:
			r.fail(rec.files[kindOptions], "", "", errors.New("options file without body and metadata files"))
		case !hasBody:
			r.fail(meta, "", "", errors.New("metadata file without a body file"))
		case !hasMeta:
			r.fail(body, "", "", errors.New("body file without a metadata file"))
		default:
			r.readMutation(rec, class, action, where)
		}
	}
}

func (r *treeReader) readMutation(rec *record, class Class, action Action, where Identity) {
	bodyPath, metaPath := rec.files[kindBody], rec.files[kindMetadata]
	metaBytes, err := r.read(metaPath)
	if err != nil {
		r.fail(metaPath, "", "", err)
		return
	}
	md, err := ParseMetadata(metaBytes)
	if err != nil {
		r.fail(metaPath, "", "", err)
		return
	}
	id := md.Identity()
	obj := id.String()
	var errs []error
	if md.Action != action {
		errs = append(errs, fieldError("action", fmt.Errorf("%s, but the file is in the %s folder", md.Action, action)))
	}
	if id.Group != where.Group {
		errs = append(errs, fieldError("resourceType.Group", fmt.Errorf("%q, but the file is in the %s folder", id.Group, GroupDir(where.Group))))
	}
	if id.Resource != where.Resource {
		errs = append(errs, fieldError("resourceType.Resource", fmt.Errorf("%q, but the file is in the %s folder", id.Resource, where.Resource)))
	}
	if id.Namespace != where.Namespace {
		errs = append(errs, fieldError("namespace", fmt.Errorf("%q, but the file is in the folder of namespace %q", id.Namespace, where.Namespace)))
	}
	if want := EscapeColons(md.Name + md.GenerateName); rec.name != want {
		errs = append(errs, fieldError("name", fmt.Errorf("the file name says %q, the metadata %q", rec.name, want)))
	}
	if len(errs) > 0 {
		r.fail(metaPath, obj, "", errors.Join(errs...))
		return
	}
	body, err := r.read(bodyPath)
	if err != nil {
		r.fail(bodyPath, obj, "", err)
		return
	}
	object, err := checkBody(md, body, r.opts.Discovery)
	if err != nil {
		r.fail(bodyPath, obj, "", err)
		return
	}
	var options []byte
	if optPath, ok := rec.files[kindOptions]; ok {
		options, err = r.read(optPath)
		if err != nil {
			r.fail(optPath, obj, "", err)
			return
		}
		var decoded map[string]any
		if err := yaml.Unmarshal(options, &decoded); err != nil {
			r.fail(optPath, obj, "", fmt.Errorf("decode options: %w", err))
			return
		}
	}
	m := Mutation{
		Class:    class,
		Metadata: md,
		Prefix:   rec.prefix,
		Body:     body,
		Object:   object,
		Options:  options,
		Path:     bodyPath,

		read: &metadataRead{file: metaBytes, as: md},
	}
	if r.visit == nil {
		r.mutations = append(r.mutations, m)
		return
	}
	if err := r.visit(&m); err != nil {
		r.visitErr, r.stopped = err, err
	}
}

// unmarshalPatch decodes a patch body as the API server reads it when it is JSON (with every
// JSON string escape, such as \/, which YAML does not know), and as YAML otherwise.
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

// WriteOptions tunes a writer.
type WriteOptions struct {
	// NameKey spells the name key of metadata files; NameKeyName when empty.
	NameKey NameKey
}

// WriteOutputDir writes an output directory into dir, which must be empty or absent: each
// mutation under its class folder, metadata written from the parsed values, bodies and options
// as their bytes, and controller-results.yaml when the directory has one. Everything is
// checked before the first file is written.
func WriteOutputDir(dir string, out *OutputDir, opts WriteOptions) error {
	var results []byte
	if out.HasControllerResults || out.ControllerResults != nil {
		var err error
		if results, err = MarshalControllerResults(out.ControllerResults); err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, ControllerResultsFile), err)
		}
	}
	byFolder := map[string][]Mutation{}
	for _, m := range out.Mutations {
		if !m.Class.Valid() {
			return fmt.Errorf("%s: class %q is not one of %v", m.Identity(), m.Class, classes)
		}
		byFolder[string(m.Class)] = append(byFolder[string(m.Class)], m)
	}
	files, err := planFiles(byFolder, opts)
	if err != nil {
		return err
	}
	if results != nil {
		files = append(files, File{Path: ControllerResultsFile, Data: results})
	}
	return WriteFiles(dir, files)
}

// WriteFolders writes mutations under named top folders of dir (for example a translated
// directory's `cluster`, `management` and `guest`), each as `<folder>/<Action>/...`. dir must
// be empty or absent. Everything is checked before the first file is written.
func WriteFolders(dir string, folders map[string][]Mutation, opts WriteOptions) error {
	for folder := range folders {
		if msgs := validFolder(folder); msgs != "" {
			return fmt.Errorf("%s: folder %q: %s", dir, folder, msgs)
		}
	}
	files, err := planFiles(folders, opts)
	if err != nil {
		return err
	}
	return WriteFiles(dir, files)
}

func validFolder(name string) string {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) {
		return "not a plain folder name"
	}
	return ""
}

// File is one file to write, relative to the directory WriteFiles writes.
type File struct {
	// Path is a slash-separated path inside the directory.
	Path string
	// Data is the file's content.
	Data []byte
}

// planFiles turns mutations into files, validating each and refusing two different mutations
// that would land on the same file (identical duplicates collapse, as in the contract).
func planFiles(folders map[string][]Mutation, opts WriteOptions) ([]File, error) {
	var files []File
	seen := fileSet{}
	var errs []error
	for _, folder := range slices.Sorted(maps.Keys(folders)) {
		for i := range folders[folder] {
			fs, err := mutationFiles(folder, &folders[folder][i], opts, seen)
			if err != nil {
				errs = append(errs, err)
			}
			files = append(files, fs...)
		}
	}
	return files, errors.Join(errs...)
}

// fileSet remembers the files a writer has placed, by a digest of their path, with a digest
// of their content, each SHA-256 cut to 128 bits (a collision among the files of a directory
// is as unlikely as with the whole digest): a streaming writer of a large directory keeps
// 32 bytes a file.
type fileSet map[digest128]digest128

// digest128 is the first half of a SHA-256 digest.
type digest128 [16]byte

func digestOf(b []byte) digest128 {
	sum := sha256.Sum256(b)
	return digest128(sum[:16])
}

func (s fileSet) add(path string, data []byte) (seen, same bool) {
	key, sum := digestOf([]byte(path)), digestOf(data)
	if prev, ok := s[key]; ok {
		return true, prev == sum
	}
	s[key] = sum
	return false, true
}

// mutationFiles returns the files of one mutation under folder that seen does not hold
// already, and records them; a file seen with other content is an error.
func mutationFiles(folder string, m *Mutation, opts WriteOptions, seen fileSet) ([]File, error) {
	meta, err := m.metadataBytes(opts.NameKey)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", folder, m.Identity(), err)
	}
	data, err := m.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", folder, err)
	}
	withBody := *m
	withBody.Body = data
	body, metaPath, optPath := MutationFiles(&withBody)
	candidates := []File{{path.Join(folder, body), data}, {path.Join(folder, metaPath), meta}}
	if m.Options != nil {
		candidates = append(candidates, File{path.Join(folder, optPath), m.Options})
	}
	var out []File
	var errs []error
	for _, f := range candidates {
		if dup, same := seen.add(f.Path, f.Data); dup {
			if !same {
				errs = append(errs, fmt.Errorf("%s: %s: two different mutations would be written to this file", f.Path, m.Identity()))
			}
			continue
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// WriteFiles writes files below dir through an os.Root, so no path can place a file outside
// it. dir must not exist or be empty.
func WriteFiles(dir string, files []File) error {
	fw, err := openFileWriter(dir)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := fw.write(f); err != nil {
			fw.close()
			return err
		}
	}
	return fw.close()
}

// fileWriter writes files below a directory through an os.Root. Files come folder by
// folder: each folder is made and opened once, and each file is written by its name in it.
type fileWriter struct {
	dir    string
	root   *os.Root
	folder string
	in     *os.Root
}

// openFileWriter makes dir, which must not exist or be empty, and opens it.
func openFileWriter(dir string) (*fileWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if entries, err := os.ReadDir(dir); err != nil {
		return nil, err
	} else if len(entries) > 0 {
		return nil, fmt.Errorf("%s: directory is not empty", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &fileWriter{dir: dir, root: root}, nil
}

func (w *fileWriter) write(f File) error {
	folder, name := path.Split(f.Path)
	if w.in == nil || folder != w.folder {
		if w.in != nil {
			w.in.Close()
			w.in = nil
		}
		d := cmp.Or(folder, ".")
		if err := w.root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("%s: %w", path.Join(w.dir, f.Path), err)
		}
		in, err := w.root.OpenRoot(d)
		if err != nil {
			return fmt.Errorf("%s: %w", path.Join(w.dir, f.Path), err)
		}
		w.in, w.folder = in, folder
	}
	if err := w.in.WriteFile(name, f.Data, 0o644); err != nil {
		return fmt.Errorf("%s: %w", path.Join(w.dir, f.Path), err)
	}
	return nil
}

func (w *fileWriter) close() error {
	if w.in != nil {
		w.in.Close()
	}
	return w.root.Close()
}

// FolderWriter writes mutations under named top folders of a directory one at a time, as
// WriteFolders writes them all at once, for a writer that streams a plan: each mutation is
// queued when it is given, and a goroutine of the writer encodes its files, checks them
// against the files written before and writes them while the caller reads and plans the next
// ones, so nothing is held but the queue and the digests of the paths written. Unlike
// WriteFolders it cannot check everything before the first file: write into a staging
// directory and publish it only once Close returned nil.
type FolderWriter struct {
	fw   *fileWriter
	opts WriteOptions
	seen fileSet // the writing goroutine's
	// batch gathers work until folderWriterBatch of it goes to the queue at once: one
	// wake-up of the writing goroutine per batch, not per file.
	batch []folderWork
	queue chan []folderWork
	done  chan struct{}
	err   atomic.Pointer[error] // the first error writing a file
}

// folderWork is one mutation to write under folder, or one file.
type folderWork struct {
	folder string
	m      Mutation // a copy: the caller may drop the content of its own once Write returns
	file   *File
}

// A FolderWriter holds at most folderWriterQueue batches of folderWriterBatch mutations or
// files before Write waits for the disk.
const (
	folderWriterBatch = 64
	folderWriterQueue = 4
)

// NewFolderWriter opens dir, which must be empty or absent, for writing. Close it.
func NewFolderWriter(dir string, opts WriteOptions) (*FolderWriter, error) {
	fw, err := openFileWriter(dir)
	if err != nil {
		return nil, err
	}
	w := &FolderWriter{fw: fw, opts: opts, seen: fileSet{}, queue: make(chan []folderWork, folderWriterQueue), done: make(chan struct{})}
	go w.drain()
	return w, nil
}

// drain writes the queued work; after an error it only empties the queue.
func (w *FolderWriter) drain() {
	defer close(w.done)
	for batch := range w.queue {
		encodeBodies(batch)
		for i := range batch {
			if w.err.Load() != nil {
				break
			}
			if err := w.write(&batch[i]); err != nil {
				w.err.Store(&err)
			}
		}
	}
}

// encodeBodies encodes, on every core, the bodies of a batch's mutations that a translation
// rewrote (no Body, an Object), before the batch is written in order: encoding is most of
// the writing of a plan that rewrites its objects. A body that does not encode is left for
// the write, which reports the error in its turn.
func encodeBodies(batch []folderWork) {
	var todo []*Mutation
	for i := range batch {
		if m := &batch[i].m; batch[i].file == nil && m.Body == nil && m.Object != nil {
			todo = append(todo, m)
		}
	}
	if len(todo) < 2 {
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(todo)) {
		wg.Go(func() {
			for k := next.Add(1) - 1; k < int64(len(todo)); k = next.Add(1) - 1 {
				if body, err := todo[k].Bytes(); err == nil {
					todo[k].Body = body
				}
			}
		})
	}
	wg.Wait()
}

// write writes one mutation's files, or one file, that were not written before.
func (w *FolderWriter) write(fw *folderWork) error {
	if f := fw.file; f != nil {
		if dup, _ := w.seen.add(f.Path, f.Data); dup {
			return fmt.Errorf("%s: written already", path.Join(w.fw.dir, f.Path))
		}
		return w.fw.write(*f)
	}
	files, err := mutationFiles(fw.folder, &fw.m, w.opts, w.seen)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := w.fw.write(f); err != nil {
			return err
		}
	}
	return nil
}

// enqueue adds work to the batch and hands a full batch to the writing goroutine.
func (w *FolderWriter) enqueue(fw folderWork) {
	w.batch = append(w.batch, fw)
	if len(w.batch) >= folderWriterBatch {
		w.queue <- w.batch
		w.batch = make([]folderWork, 0, folderWriterBatch)
	}
}

// failed returns the first error writing a file, if any.
func (w *FolderWriter) failed() error {
	if err := w.err.Load(); err != nil {
		return *err
	}
	return nil
}

// Write queues one mutation's files under folder (`<folder>/<Action>/...`). It returns the
// first error of a file queued before (one written before with other content, or one the
// disk refused), as soon as the writer met it; Close returns the others.
func (w *FolderWriter) Write(folder string, m *Mutation) error {
	if err := w.failed(); err != nil {
		return err
	}
	if msgs := validFolder(folder); msgs != "" {
		return fmt.Errorf("%s: folder %q: %s", w.fw.dir, folder, msgs)
	}
	w.enqueue(folderWork{folder: folder, m: *m})
	return nil
}

// WriteFile queues one more file at rel, a slash-separated path inside the directory; a file
// written before is an error of a later Write, or of Close.
func (w *FolderWriter) WriteFile(rel string, data []byte) error {
	if err := w.failed(); err != nil {
		return err
	}
	w.enqueue(folderWork{file: &File{Path: rel, Data: data}})
	return nil
}

// Close waits for the queued files to be written and closes the directory; it returns the
// first error writing a file. Call it once.
func (w *FolderWriter) Close() error {
	if len(w.batch) > 0 {
		w.queue <- w.batch
	}
	close(w.queue)
	<-w.done
	return errors.Join(w.failed(), w.fw.close())
}
