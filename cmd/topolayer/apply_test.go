package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

func TestApplyValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    ApplyOptions
		want []string // substrings of the error; none means valid
	}{
		{"no flags", ApplyOptions{}, []string{"--config is required", "--from is required", "--operator is required"}},
		{"contexts", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{ManagementContext: "m", GuestContext: "g"}}, nil},
		{"half hosted by context", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{GuestContext: "g"}}, []string{"go together"}},
		{"context and hosted", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{Context: "c", ManagementContext: "m", GuestContext: "g"}}, []string{"exclusive"}},
		{"standalone", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{Kubeconfig: "k"}}, nil},
		{"hosted", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{ManagementKubeconfig: "m", GuestKubeconfig: "g", AsServiceAccount: "ns/sa"}}, nil},
		{"half hosted", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{ManagementKubeconfig: "m"}}, []string{"go together"}},
		{"both", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{Kubeconfig: "k", GuestKubeconfig: "g"}}, []string{"exclusive"}},
		{"adopt from", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{Kubeconfig: "k", AdoptFrom: []string{"authentication-operator"}}}, nil},
		{"adopt from nobody", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{Kubeconfig: "k", AdoptFrom: []string{" "}}}, []string{"--adopt-from: must name a field manager"}},
		{"bad account", ApplyOptions{SourceOptions: SourceOptions{ConfigFile: "c", From: "f", Operator: "op"}, ClusterOptions: ClusterOptions{Kubeconfig: "k", AsServiceAccount: "sa"}}, []string{"--as-service-account \"sa\""}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkErr(t, tc.o.Validate(), tc.want) })
	}
}

func TestApplyCompleteRefusesAnUnknownOutput(t *testing.T) {
	o := &ApplyOptions{Output: "xml"}
	if err := o.Complete(); err == nil || !strings.Contains(err.Error(), "--output") {
		t.Fatalf("Complete = %v", err)
	}
	if err := o.Run(t.Context()); err == nil {
		t.Fatal("Run without Complete succeeded")
	}
}

// TestImpersonate: --as-service-account wins over the configuration's serviceAccount of the
// operator, which applies without the flag; other operators impersonate nobody.
func TestImpersonate(t *testing.T) {
	cfg, err := config.Parse([]byte("apiVersion: topolayer.dev/v1alpha1\nkind: TopologyConfig\n" +
		"operators:\n- {name: sample-operator, command: [bin/sample-operator], serviceAccount: openshift-sample/sample-operator}\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		flag, operator, want string
	}{
		{"clusters-example/sample-operator", "sample-operator", "system:serviceaccount:clusters-example:sample-operator"},
		{"", "sample-operator", "system:serviceaccount:openshift-sample:sample-operator"},
		{"", "another-operator", ""},
	} {
		user, err := (&ClusterOptions{AsServiceAccount: tc.flag}).impersonate(cfg, tc.operator)
		if err != nil || user != tc.want {
			t.Errorf("flag %q, operator %s: impersonate = %q, %v; want %q", tc.flag, tc.operator, user, err, tc.want)
		}
	}
	user := "system:serviceaccount:clusters-example:sample-operator"
	if ns, name, err := apply.ParseServiceAccount(user); err != nil || ns != "clusters-example" || name != "sample-operator" {
		t.Errorf("ParseServiceAccount(%q) = %q %q %v", user, ns, name, err)
	}
	for _, bad := range []string{"a", "/b", "a/", "a/b/c", "a:b/c"} {
		if _, err := (&ClusterOptions{AsServiceAccount: bad}).impersonate(nil, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestLoadKubeconfig: kubectl's loading rules: a flag's file alone ($KUBECONFIG is not
// merged in), else $KUBECONFIG; the context flag, else the current context.
func TestLoadKubeconfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, server string) string {
		p := filepath.Join(dir, name)
		kc := `apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "` + server + `"}}
- {name: other, cluster: {server: "https://other.invalid:6443"}}
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}, {name: other, context: {cluster: other, user: u}}]
current-context: c
`
		if err := os.WriteFile(p, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	env := write("env", "https://env.invalid:6443")
	flag := write("flag", "https://flag.invalid:6443")
	t.Setenv("KUBECONFIG", env)
	for _, tc := range []struct{ path, context, want string }{
		{flag, "", "https://flag.invalid:6443"},
		{"", "", "https://env.invalid:6443"},
		{"", "other", "https://other.invalid:6443"},
		{flag, "other", "https://other.invalid:6443"},
	} {
		cfg, err := loadKubeconfig("kubeconfig", tc.path, tc.context)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != tc.want {
			t.Errorf("path %q, context %q: host = %s, want %s", tc.path, tc.context, cfg.Host, tc.want)
		}
	}
	if _, err := loadKubeconfig("guest-kubeconfig", filepath.Join(dir, "missing"), ""); err == nil || !strings.Contains(err.Error(), "--guest-kubeconfig") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := loadKubeconfig("kubeconfig", "", "nope"); err == nil || !strings.Contains(err.Error(), "context nope") {
		t.Errorf("missing context: %v", err)
	}
}

func TestPlanLiveFlagsValidate(t *testing.T) {
	src := SourceOptions{ConfigFile: "c", From: "f"}
	for _, o := range []PlanOptions{
		{SourceOptions: src, Diff: true, Output: "table"},
		{SourceOptions: src, ClusterOptions: ClusterOptions{AsServiceAccount: "a/b"}, Output: "table"},
		{SourceOptions: src, ClusterOptions: ClusterOptions{Kubeconfig: "k"}, Output: "dot"},
		{SourceOptions: src, ClusterOptions: ClusterOptions{AdoptFrom: []string{"authentication-operator"}}, Output: "table"},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: valid", o)
		}
	}
	ok := PlanOptions{SourceOptions: src, ClusterOptions: ClusterOptions{Kubeconfig: "k", AdoptFrom: []string{"authentication-operator"}}, Diff: true, Output: "json"}
	if err := ok.Validate(); err != nil {
		t.Error(err)
	}
}

func cm(data map[string]any, rv string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "x", "namespace": "ns", "resourceVersion": rv, "uid": "u-" + rv, "managedFields": []any{map[string]any{"manager": "m"}}},
		"data":     data,
	}}
}

func TestObjectDiffStripsServerNoise(t *testing.T) {
	d, err := objectDiff("management:configmaps/ns/x", cm(map[string]any{"a": "1"}, "1"), cm(map[string]any{"a": "2"}, "2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- live/management:configmaps/ns/x", "+++ planned/management:configmaps/ns/x", "-  a: \"1\"", "+  a: \"2\""} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	for _, noise := range []string{"resourceVersion", "uid", "managedFields"} {
		if strings.Contains(d, noise) {
			t.Errorf("diff shows %s:\n%s", noise, d)
		}
	}
	if d, _ := objectDiff("x", cm(map[string]any{"a": "1"}, "1"), cm(map[string]any{"a": "1"}, "2")); d != "" {
		t.Errorf("equal objects differ:\n%s", d)
	}
}

func TestLiveEntriesAndTable(t *testing.T) {
	id := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "x"}
	plan := &plans.Plan{Topology: "standalone", Entries: []plans.Entry{{Action: contract.ActionCreate, Source: id}, {Action: contract.ActionCreate, Source: id}, {Action: contract.ActionCreate, Source: id}, {Action: contract.ActionCreate, Source: id}, {Action: contract.ActionCreate, Source: id}}}
	results := []apply.EntryResult{
		{Index: 0, Cluster: "cluster", Action: contract.ActionCreate, Identity: id, Status: apply.StatusValid, Change: apply.ChangeCreate, Object: cm(map[string]any{"a": "1"}, "")},
		{Index: 1, Cluster: "cluster", Action: contract.ActionCreate, Identity: id, Status: apply.StatusValid, Change: apply.ChangeNone},
		{Index: 2, Cluster: "cluster", Action: contract.ActionCreate, Identity: id, Status: apply.StatusFailed, Err: errors.New("forbidden:\nno")},
		{Index: 3, Cluster: "cluster", Action: contract.ActionCreate, Identity: id, Status: apply.StatusValid},
		{Index: 4, Cluster: "cluster", Action: contract.ActionCreate, Identity: id, Status: apply.StatusValid, Change: apply.ChangeAdopt, Object: cm(map[string]any{"a": "1"}, ""), Live: cm(map[string]any{"a": "1"}, "")},
	}
	live, err := liveEntries(plan, results, true)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, l := range live {
		got = append(got, l.Result)
	}
	if strings.Join(got, ",") != "create,unchanged,fail,valid,adopt" {
		t.Errorf("results = %v", got)
	}
	if live[0].Diff == "" || live[1].Diff != "" {
		t.Errorf("diffs: %q, %q", live[0].Diff, live[1].Diff)
	}
	var out bytes.Buffer
	if err := printLive(&out, &out, "table", tableView{}, plan, live); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LIVE", "FAILED (1)", "#2 Create cluster:configmaps/ns/x", "forbidden: no", "1 create, 0 change, 1 adopt, 1 unchanged, 0 delete, 1 fail, 1 valid", "+++ planned/cluster:configmaps/ns/x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "forbidden"); n != 1 {
		t.Errorf("the failure is printed %d times, want once:\n%s", n, out.String())
	}
	out.Reset()
	if err := printApplyTable(&out, plan, []apply.EntryResult{results[2]}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "STATUS  CHANGE") || !strings.Contains(out.String(), "0 applied, 0 skipped, 1 failed") ||
		!strings.Contains(out.String(), "FAILED (1)\n#2 Create cluster:configmaps/ns/x") || strings.Count(out.String(), "forbidden") != 1 {
		t.Errorf("apply table:\n%s", out.String())
	}
}

// TestApplyOutputObjects: apply -o json and yaml carry the stored object without
// managedFields.
func TestApplyOutputObjects(t *testing.T) {
	id := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "ns", Name: "x"}
	plan := &plans.Plan{Entries: []plans.Entry{{Action: contract.ActionApply, Source: id}}}
	stored := cm(map[string]any{"a": "1"}, "7") // with managedFields
	results := []apply.EntryResult{{Index: 0, Cluster: "cluster", Action: contract.ActionApply, Identity: id, Status: apply.StatusApplied, Change: apply.ChangeCreate, Object: stored}}
	for _, format := range []string{"json", "yaml"} {
		var out bytes.Buffer
		if err := applyPrinters[format](&out, plan, results); err != nil {
			t.Fatal(err)
		}
		js := out.Bytes()
		if format == "yaml" {
			var err error
			if js, err = yaml.YAMLToJSON(js); err != nil {
				t.Fatal(err)
			}
		}
		var got []applyResult
		if err := json.Unmarshal(js, &got); err != nil {
			t.Fatalf("%s: %v\n%s", format, err, out.String())
		}
		if len(got) != 1 || got[0].Status != "applied" || got[0].Object["data"] == nil || strings.Contains(out.String(), "managedFields") {
			t.Errorf("%s:\n%s", format, out.String())
		}
	}
	if len(stored.GetManagedFields()) != 1 {
		t.Error("the printer changed the result's object")
	}
}
