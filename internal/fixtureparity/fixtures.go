package fixtureparity

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/contract"
)

// Fixture is one object HyperShift renders, as read from its file.
type Fixture struct {
	// File is the file it was read from.
	File string `json:"file"`
	// Object is the object, as JSON values.
	Object map[string]any `json:"object"`
}

// Kind and Name return the fixture object's kind and name.
func (f Fixture) Kind() string { s, _ := f.Object["kind"].(string); return s }

// Name returns the fixture object's metadata.name.
func (f Fixture) Name() string {
	meta, _ := f.Object["metadata"].(map[string]any)
	s, _ := meta["name"].(string)
	return s
}

// ReadFixtureDir reads the fixtures of one variant: every .yaml file directly in dir (not
// its subdirectories, which hold the other variants), one object each, sorted by file name.
// A file that does not hold one object with a kind and a name is an error naming it; every
// bad file is reported.
func ReadFixtureDir(dir string) ([]Fixture, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []Fixture
	var errs []error
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := os.ReadFile(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f, err := ParseFixture(path, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, f)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no fixture files (*.yaml)", dir)
	}
	slices.SortFunc(out, func(a, b Fixture) int { return strings.Compare(a.File, b.File) })
	return out, nil
}

// ParseFixture reads one fixture object from the contents of file.
func ParseFixture(file string, data []byte) (Fixture, error) {
	obj, err := contract.ParseObject(data)
	if err != nil {
		return Fixture{}, fmt.Errorf("%s: %w", file, err)
	}
	f := Fixture{File: file, Object: obj}
	if f.Kind() == "" || f.Name() == "" {
		return Fixture{}, fmt.Errorf("%s: kind and metadata.name: want an object with both", file)
	}
	return f, nil
}
