package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// addOutputDirFlags adds --to, the directory a command writes (what names what it holds,
// e.g. "input directory"), and --overwrite, which lets it replace a directory with content:
// the flags of replaceDir.
func addOutputDirFlags(cmd *cobra.Command, to *string, overwrite *bool, what string) {
	cmd.Flags().StringVar(to, "to", *to, what+" to write; must be absent or empty unless --overwrite")
	cmd.Flags().BoolVar(overwrite, "overwrite", *overwrite, "replace --to if it already has content")
}

// replaceDir fills a fresh directory beside to, then renames it into place, so that to holds
// either its old content or the whole new one, never a part. to must be absent or empty
// unless overwrite is set. fill receives the staged directory, which does not exist yet.
func replaceDir(to string, overwrite bool, fill func(staged string) error) error {
	to = filepath.Clean(to)
	if entries, err := os.ReadDir(to); err == nil && len(entries) > 0 && !overwrite {
		return fmt.Errorf("--to %s: directory is not empty (use --overwrite to replace it)", to)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("--to %s: %w", to, err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(to), "."+filepath.Base(to)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	staged := filepath.Join(tmp, "new")
	if err := fill(staged); err != nil {
		return err
	}
	if _, err := os.Stat(to); err == nil {
		if err := os.Rename(to, filepath.Join(tmp, "old")); err != nil {
			return fmt.Errorf("--to %s: %w", to, err)
		}
	}
	if err := os.Rename(staged, to); err != nil {
		return fmt.Errorf("--to %s: %w", to, err)
	}
	return nil
}
