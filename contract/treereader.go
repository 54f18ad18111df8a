package contract

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"

	"sigs.k8s.io/yaml"
)

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

// readParsed reads one regular file and parses it with parse, or records why it cannot.
func readParsed[T any](r *treeReader, rel string, e fs.DirEntry, parse func([]byte) (T, error)) (T, bool) {
	var zero T
	data, ok := r.readFile(rel, e)
	if !ok {
		return zero, false
	}
	v, err := parse(data)
	if err != nil {
		r.fail(rel, "", "", err)
		return zero, false
	}
	return v, true
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
	for _, e := range r.readDir(base) {
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

// readDir lists the entries of dir, or records why it cannot and returns none.
func (r *treeReader) readDir(dir string) []fs.DirEntry {
	entries, err := fs.ReadDir(r.fsys, dir)
	if err != nil {
		r.fail(dir, "", "", err)
		return nil
	}
	return entries
}

// subdirs lists the entries of dir, all of which must be directories.
func (r *treeReader) subdirs(dir string) []fs.DirEntry {
	entries := r.readDir(dir)
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
	records := map[string]*record{}
	var keys []string
	for _, e := range r.readDir(dir) {
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
