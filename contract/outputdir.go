package contract

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"sort"
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
			res, ok := readParsed(r, name, e, ParseControllerResults)
			if !ok {
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

// JSON string escape, such as \/, which YAML does not know), and as YAML otherwise.
