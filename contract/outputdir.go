package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

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
	r, err := newTreeReader(ctx, dir, opts)
	if err != nil {
		return nil, err
	}
	defer r.root.Close()

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
			r.fail(name, "", "", fmt.Errorf("unexpected entry: an output directory holds only %v, %s, %s and %s", Classes, ControllerResultsFile, stdoutLog, stderrLog))
		}
	}
	if err := r.err(); err != nil {
		return nil, err
	}
	out.Mutations = r.mutations
	sortMutations(out.Mutations)
	return out, nil
}

// ReadActionTree reads one folder of `<Action>/...` trees, such as a single class folder or a
// target folder of a translated directory, and returns its mutations with Class set to class.
func ReadActionTree(dir string, class Class, opts ReadOptions) ([]Mutation, error) {
	r, err := newTreeReader(context.Background(), dir, opts)
	if err != nil {
		return nil, err
	}
	defer r.root.Close()
	r.readActions(".", class)
	if err := r.err(); err != nil {
		return nil, err
	}
	sortMutations(r.mutations)
	return r.mutations, nil
}

func sortMutations(ms []Mutation) {
	sort.SliceStable(ms, func(i, j int) bool {
		ci, cj := slices.Index(Classes, ms[i].Class), slices.Index(Classes, ms[j].Class)
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
	data, err := readLimited(r.root, rel, r.opts.MaxFileSize)
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
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
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
			r.fail(rel, "", "", fmt.Errorf("unknown action folder %q (want one of %v)", e.Name(), Actions))
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
	if err := checkBody(md, body, r.opts.Discovery); err != nil {
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
	r.mutations = append(r.mutations, Mutation{
		Class:    class,
		Metadata: md,
		Prefix:   rec.prefix,
		Body:     body,
		Options:  options,
		Path:     bodyPath,
	})
}

// objectHeader is the part of a body the reader checks against the metadata.
type objectHeader struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name         string `json:"name"`
		Namespace    string `json:"namespace"`
		GenerateName string `json:"generateName"`
	} `json:"metadata"`
}

// checkBody decodes a body and checks it against its metadata: object-bearing actions need an
// object of the metadata's group whose name, namespace and kind fit; JSON patches are lists;
// merge patches are objects; Delete bodies are DeleteOptions.
func checkBody(md Metadata, body []byte, disc *Discovery) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return errors.New("empty body")
	}
	switch md.Action {
	case ActionPatch, ActionPatchStatus:
		if md.PatchType == PatchTypeJSON {
			var ops []map[string]any
			if err := yaml.Unmarshal(body, &ops); err != nil {
				return fmt.Errorf("decode JSON patch: %w", err)
			}
			for i, op := range ops {
				if _, ok := op["op"].(string); !ok {
					return fieldError(fmt.Sprintf("[%d].op", i), errors.New("required"))
				}
				if _, ok := op["path"].(string); !ok {
					return fieldError(fmt.Sprintf("[%d].path", i), errors.New("required"))
				}
			}
			return nil
		}
		var patch map[string]any
		if err := yaml.Unmarshal(body, &patch); err != nil {
			return fmt.Errorf("decode %s: %w", md.PatchType, err)
		}
		return nil
	case ActionDelete:
		var h objectHeader
		if err := yaml.Unmarshal(body, &h); err != nil {
			return fmt.Errorf("decode DeleteOptions: %w", err)
		}
		if h.Kind != "DeleteOptions" {
			return fieldError("kind", fmt.Errorf("%q, but a Delete body is a DeleteOptions", h.Kind))
		}
		return nil
	}
	var h objectHeader
	if err := yaml.Unmarshal(body, &h); err != nil {
		return fmt.Errorf("decode body: %w", err)
	}
	gv, err := schema.ParseGroupVersion(h.APIVersion)
	switch {
	case h.APIVersion == "":
		return fieldError("apiVersion", errors.New("required"))
	case err != nil:
		return fieldError("apiVersion", err)
	case h.Kind == "":
		return fieldError("kind", errors.New("required"))
	case gv.Group != md.ResourceType.Group:
		return fieldError("apiVersion", fmt.Errorf("%q is not in group %q of the metadata", h.APIVersion, md.ResourceType.Group))
	case h.Metadata.Namespace != md.Namespace:
		return fieldError("metadata.namespace", fmt.Errorf("%q, but the metadata says %q", h.Metadata.Namespace, md.Namespace))
	case h.Metadata.Name != md.Name:
		return fieldError("metadata.name", fmt.Errorf("%q, but the metadata says %q", h.Metadata.Name, md.Name))
	case md.Name == "" && h.Metadata.GenerateName != md.GenerateName:
		return fieldError("metadata.generateName", fmt.Errorf("%q, but the metadata says %q", h.Metadata.GenerateName, md.GenerateName))
	}
	gvr := schema.GroupVersionResource{Group: md.ResourceType.Group, Version: gv.Version, Resource: md.ResourceType.Resource}
	if kind, ok := disc.KindFor(gvr); ok && kind != h.Kind {
		return fieldError("kind", fmt.Errorf("%q, but %s holds %s objects", h.Kind, gvr.GroupResource(), kind))
	}
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
			return fmt.Errorf("%s: class %q is not one of %v", m.Identity(), m.Class, Classes)
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
	written := map[string][]byte{}
	var errs []error
	add := func(p string, data []byte, id Identity) {
		if prev, ok := written[p]; ok {
			if !bytes.Equal(prev, data) {
				errs = append(errs, fmt.Errorf("%s: %s: two different mutations would be written to this file", p, id))
			}
			return
		}
		written[p] = data
		files = append(files, File{Path: p, Data: data})
	}
	for _, folder := range slices.Sorted(maps.Keys(folders)) {
		for i := range folders[folder] {
			m := &folders[folder][i]
			meta, err := MarshalMetadata(m.Metadata, opts.NameKey)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %s: %w", folder, m.Identity(), err))
				continue
			}
			body, metaPath, optPath := MutationFiles(m)
			add(path.Join(folder, body), m.Body, m.Identity())
			add(path.Join(folder, metaPath), meta, m.Identity())
			if m.Options != nil {
				add(path.Join(folder, optPath), m.Options, m.Identity())
			}
		}
	}
	return files, errors.Join(errs...)
}

// WriteFiles writes files below dir through an os.Root, so no path can place a file outside
// it. dir must not exist or be empty.
func WriteFiles(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if entries, err := os.ReadDir(dir); err != nil {
		return err
	} else if len(entries) > 0 {
		return fmt.Errorf("%s: directory is not empty", dir)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, f := range files {
		if err := root.MkdirAll(path.Dir(f.Path), 0o755); err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, f.Path), err)
		}
		if err := root.WriteFile(f.Path, f.Data, 0o644); err != nil {
			return fmt.Errorf("%s: %w", path.Join(dir, f.Path), err)
		}
	}
	return nil
}
