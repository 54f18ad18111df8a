package contract

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"
)

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
