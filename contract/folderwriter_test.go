package contract_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

// TestFolderWriterWritesWhatWriteFoldersWrites: mutations written one at a time through a
// FolderWriter make the same tree as WriteFolders, whose files are the reader's bytes where
// the metadata is unchanged; a changed identity is written anew.
func TestFolderWriterWritesWhatWriteFoldersWrites(t *testing.T) {
	src := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "src"))
	out := contracttest.ReadOutputDir(t, src)
	renamed := out.Mutations[0]
	renamed.Metadata.Name += "-renamed"
	renamed.Prefix = ""
	folders := map[string][]contract.Mutation{"cluster": out.Mutations, "guest": {renamed}}

	all := filepath.Join(t.TempDir(), "all")
	if err := contract.WriteFolders(all, folders, contract.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	streamed := filepath.Join(t.TempDir(), "streamed")
	w, err := contract.NewFolderWriter(streamed, contract.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, folder := range []string{"cluster", "guest"} {
		for i := range folders[folder] {
			if err := w.Write(folder, &folders[folder][i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, got := contracttest.ReadTree(t, all), contracttest.ReadTree(t, streamed)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("FolderWriter wrote\n%v\nWriteFolders wrote\n%v", got, want)
	}
	// The metadata of unchanged mutations is the file as read, byte for byte.
	read := contracttest.ReadTree(t, src)
	for rel, data := range read {
		if strings.Contains(rel, "-metadata-") && got["cluster/"+strings.SplitN(rel, "/", 2)[1]] != data {
			t.Errorf("%s: not written as read", rel)
		}
	}
}

// TestFolderWriterRefusesCollisions: a second, different mutation for the same file is an
// error (of a later Write or of Close: the writer's goroutine finds it); an identical one
// collapses; a folder that is a path is refused at once.
func TestFolderWriterRefusesCollisions(t *testing.T) {
	ms := contracttest.ValidMutations()
	twin := ms[1]
	twin.Prefix = contract.FilePrefix(ms[1].Body, nil)
	twin.Metadata.ControllerInstanceName = "another"
	for _, tc := range []struct {
		name    string
		writes  []*contract.Mutation
		wantErr string
	}{
		{"the same mutation twice", []*contract.Mutation{&ms[1], &ms[1]}, ""},
		{"two mutations for one file", []*contract.Mutation{&ms[1], &twin}, "two different mutations would be written to this file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := contract.NewFolderWriter(filepath.Join(t.TempDir(), "out"), contract.WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var errs []error
			for _, m := range tc.writes {
				errs = append(errs, w.Write("cluster", m))
			}
			if err := w.Write("../x", &ms[1]); err == nil {
				t.Error("a folder with a path was accepted")
			}
			errs = append(errs, w.Close())
			err = errors.Join(errs...)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
}

// TestWalkOutputDir: the walk hands every mutation the reader reads, with its body parsed,
// keeps none, and stops at the visitor's first error.
func TestWalkOutputDir(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	want := contracttest.ReadOutputDir(t, dir)
	var paths []string
	out, err := contract.WalkOutputDir(context.Background(), dir, contract.ReadOptions{}, func(m *contract.Mutation) error {
		if m.Metadata.Action.CarriesObject() && m.Object == nil {
			t.Errorf("%s: no parsed object", m.Path)
		}
		paths = append(paths, m.Path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Mutations) != 0 || !out.HasControllerResults || len(paths) != len(want.Mutations) {
		t.Fatalf("walk: %d mutations kept, controller results %v, %d visited; want 0, true, %d", len(out.Mutations), out.HasControllerResults, len(paths), len(want.Mutations))
	}
	stop := errors.New("stop")
	visited := 0
	_, err = contract.WalkOutputDir(context.Background(), dir, contract.ReadOptions{}, func(*contract.Mutation) error {
		visited++
		return stop
	})
	if !errors.Is(err, stop) || visited != 1 {
		t.Fatalf("after the visitor's error: %v, %d visited; want stop, 1", err, visited)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
