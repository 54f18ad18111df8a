package prune

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// Write writes lists below dir, which must be absent or empty, through an os.Root so that no
// path can place a file outside it. Every list is marshalled before the first file is written.
func Write(dir string, lists []List) error {
	data := make([][]byte, len(lists))
	var errs []error
	for i := range lists {
		if !fs.ValidPath(lists[i].Path) || path.Ext(lists[i].Path) != ".yaml" {
			errs = append(errs, fmt.Errorf("%q: not a relative path to a .yaml file", lists[i].Path))
			continue
		}
		b, err := lists[i].Marshal()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		data[i] = b
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
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
	for i, l := range lists {
		if err := root.MkdirAll(path.Dir(l.Path), 0o755); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, l.Path), err)
		}
		if err := root.WriteFile(l.Path, data[i], 0o644); err != nil {
			return fmt.Errorf("%s: %w", filepath.Join(dir, l.Path), err)
		}
	}
	return nil
}
