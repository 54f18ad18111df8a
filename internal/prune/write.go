package prune

import (
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/topolayer/topolayer/contract"
)

// Write writes lists below dir, which must be absent or empty, through an os.Root so that no
// path can place a file outside it. Every list is marshalled before the first file is written.
func Write(dir string, lists []List) error {
	files := make([]contract.File, len(lists))
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
		files[i] = contract.File{Path: lists[i].Path, Data: b}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return contract.WriteFiles(dir, files)
}
