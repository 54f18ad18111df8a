package contract_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

func TestReadValidOutputDir(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	out := contracttest.ReadOutputDir(t, dir)
	want := contracttest.ValidMutations()
	if len(out.Mutations) != len(want) {
		t.Fatalf("read %d mutations, wrote %d", len(out.Mutations), len(want))
	}
	type key struct {
		action contract.Action
		id     contract.Identity
	}
	byID := map[key]contract.Mutation{}
	for _, m := range out.Mutations {
		byID[key{m.Metadata.Action, m.Identity()}] = m
	}
	for _, w := range want {
		got, ok := byID[key{w.Metadata.Action, w.Identity()}]
		if !ok {
			t.Errorf("%s not read back", w.Identity())
			continue
		}
		if string(got.Body) != string(w.Body) || string(got.Options) != string(w.Options) {
			t.Errorf("%s: bytes changed", w.Identity())
		}
		if got.Prefix != contract.FilePrefix(w.Body, w.Options) {
			t.Errorf("%s: prefix %q", w.Identity(), got.Prefix)
		}
	}
	gen := byID[key{contract.ActionCreate, contract.Identity{Group: "certificates.k8s.io", Version: "v1", Resource: "certificatesigningrequests", GenerateName: "system:sample:client-"}}]
	if !strings.HasSuffix(gen.Path, "-body-system-COLON-sample-COLON-client-.yaml") {
		t.Errorf("generateName create written as %q", gen.Path)
	}
	if out.ControllerResults == nil || out.ControllerResults.ControllerResults[0].Status != contract.ControllerSucceeded {
		t.Errorf("controller results: %+v", out.ControllerResults)
	}
}

// TestMalformedOutputDirs: every malformed directory gives an error that names the file and
// the problem, matches ErrMalformed, and returns nothing.
func TestMalformedOutputDirs(t *testing.T) {
	cases := contracttest.MalformedOutputDirs(t)
	if len(cases) < 15 {
		t.Fatalf("only %d malformed cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			out, err := contract.ReadOutputDir(c.Dir, c.Options)
			if err == nil {
				t.Fatalf("no error; read %d mutations", len(out.Mutations))
			}
			if out != nil {
				t.Errorf("a result came with the error")
			}
			if !errors.Is(err, contract.ErrMalformed) {
				t.Errorf("error does not match ErrMalformed: %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(c.Dir, c.File)) {
				t.Errorf("error does not name %s:\n%s", c.File, msg)
			}
			if !strings.Contains(msg, c.Want) {
				t.Errorf("error does not say %q:\n%s", c.Want, msg)
			}
		})
	}
}

func TestMetadataNameKeys(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    contract.Metadata
		wantErr string
	}{{
		name: "current key",
		in:   "action: Create\ncontrollerInstanceName: c\ngenerateName: \"\"\nname: settings\nnamespace: ns\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n",
		want: contract.Metadata{Action: contract.ActionCreate, ControllerInstanceName: "c", Name: "settings", Namespace: "ns", NameKey: contract.NameKeyName,
			ResourceType: contract.ResourceType{Resource: "configmaps", Version: "v1"}},
	}, {
		name: "legacy key",
		in:   "action: Apply\ncontrollerInstanceName: c\nfieldManager: fm\ngenerateName: \"\"\nmame: cluster\nresourceType:\n  Group: operator.openshift.io\n  Resource: authentications\n  Version: v1\n",
		want: contract.Metadata{Action: contract.ActionApply, ControllerInstanceName: "c", FieldManager: "fm", Name: "cluster", NameKey: contract.NameKeyLegacy,
			ResourceType: contract.ResourceType{Group: "operator.openshift.io", Resource: "authentications", Version: "v1"}},
	}, {
		name:    "no name key",
		in:      "action: Create\ncontrollerInstanceName: c\ngenerateName: \"\"\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n",
		wantErr: "name: required",
	}, {
		name:    "unknown action",
		in:      "action: Upsert\ncontrollerInstanceName: c\ngenerateName: \"\"\nname: n\nresourceType:\n  Group: \"\"\n  Resource: configmaps\n  Version: v1\n",
		wantErr: `action: "Upsert" is not one of`,
	}, {
		name:    "core spelled out",
		in:      "action: Create\ncontrollerInstanceName: c\ngenerateName: \"\"\nname: n\nresourceType:\n  Group: core\n  Resource: configmaps\n  Version: v1\n",
		wantErr: `"core" is spelled ""`,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := contract.ParseMetadata([]byte(tc.in))
			if contracttest.CheckErr(t, err, tc.wantErr) {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
			back, err := contract.MarshalMetadata(got, got.NameKey)
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != tc.in {
				t.Fatalf("written back as\n%s\nwant\n%s", back, tc.in)
			}
		})
	}
}

func TestFilePrefix(t *testing.T) {
	for _, tc := range []struct {
		body, options string
		want          string
	}{
		{"", "", "MISSING"},
		// sha256("hello\n") ends in ...be03; the prefix is the last two bytes.
		{"hello\n", "", "be03"},
		{"", "hello\n", "be03"},
	} {
		if got := contract.FilePrefix([]byte(tc.body), []byte(tc.options)); got != tc.want {
			t.Errorf("FilePrefix(%q, %q) = %q, want %q", tc.body, tc.options, got, tc.want)
		}
	}
}

func TestWriteRefusesCollisionsAndEscapes(t *testing.T) {
	ms := contracttest.ValidMutations()
	twin := ms[1]
	twin.Body = append([]byte(nil), twin.Body...)
	twin.Prefix = contract.FilePrefix(ms[1].Body, nil)
	twin.Metadata.ControllerInstanceName = "another"
	err := contract.WriteOutputDir(filepath.Join(t.TempDir(), "a"), &contract.OutputDir{Mutations: append(ms, twin)}, contract.WriteOptions{})
	if err == nil || !strings.Contains(err.Error(), "two different mutations") {
		t.Fatalf("collision: %v", err)
	}
	escape := ms[1]
	escape.Metadata.Name = "../../x"
	dir := filepath.Join(t.TempDir(), "b")
	if err := contract.WriteOutputDir(dir, &contract.OutputDir{Mutations: []contract.Mutation{escape}}, contract.WriteOptions{}); err == nil {
		t.Fatal("a name with a path was written")
	}
}

// TestReadOutputDirContextCanceled: a done context stops the read with its error, which is
// not a malformed directory.
func TestReadOutputDirContextCanceled(t *testing.T) {
	dir := contracttest.WriteValidOutputDir(t, filepath.Join(t.TempDir(), "out"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := contract.ReadOutputDirContext(ctx, dir, contract.ReadOptions{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, contract.ErrMalformed) || out != nil {
		t.Fatalf("got %v, %v; want only context.Canceled", out, err)
	}
}
