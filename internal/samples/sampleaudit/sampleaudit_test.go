package sampleaudit_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/samples/sampleaudit"
)

func TestPolicy(t *testing.T) {
	tests := map[string]struct {
		profile string
		want    string
		wantErr bool
	}{
		"default":              {profile: "Default", want: "rules:\n- level: Metadata\n"},
		"write request bodies": {profile: "WriteRequestBodies", want: "rules:\n- level: RequestResponse\n  verbs:\n  - create\n  - update\n  - patch\n  - delete\n- level: Metadata\n"},
		"all request bodies":   {profile: "AllRequestBodies", want: "rules:\n- level: RequestResponse\n"},
		"none":                 {profile: "None", want: "rules:\n- level: None\n"},
		"unknown":              {profile: "Verbose", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := sampleaudit.Policy(tc.profile)
			if (err != nil) != tc.wantErr {
				t.Fatalf("error %v", err)
			}
			if tc.wantErr {
				return
			}
			if !strings.HasPrefix(got, "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages:\n- RequestReceived\n") || !strings.HasSuffix(got, tc.want) {
				t.Errorf("policy:\n%s", got)
			}
		})
	}
}

func TestProfilePrecedence(t *testing.T) {
	cm := func(name, key, value string) string {
		return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: " + name + "\n  namespace: openshift-config\ndata:\n  " + key + ": " + value + "\n"
	}
	tests := map[string]struct {
		files map[string]string
		want  string
	}{
		"nothing set":       {want: "Default"},
		"cluster profile":   {files: map[string]string{"audit-policy": cm("audit-policy", "policy", "AllRequestBodies")}, want: "AllRequestBodies"},
		"settings override": {files: map[string]string{"audit-policy": cm("audit-policy", "policy", "AllRequestBodies"), "sample-settings": cm("sample-settings", "auditPolicy", "None")}, want: "None"},
		"empty override":    {files: map[string]string{"audit-policy": cm("audit-policy", "policy", "WriteRequestBodies"), "sample-settings": cm("sample-settings", "auditPolicy", `""`)}, want: "WriteRequestBodies"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			in := t.TempDir()
			dir := filepath.Join(in, "namespaces", "openshift-config", "core", "configmaps")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for n, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, n+".yaml"), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			op, err := sampleaudit.New()
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			if err := op.Run(context.Background(), in, out, time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), nil); err != nil {
				t.Fatal(err)
			}
			read, err := contract.ReadOutputDir(out, contract.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var classes []contract.Class
			found := false
			for _, m := range read.Mutations {
				classes = append(classes, m.Class)
				if m.Identity().Name == sampleaudit.AuditConfigName {
					found = strings.Contains(string(m.Body), "  profile: "+tc.want+"\n")
				}
			}
			if !found {
				t.Errorf("audit-config does not hold profile %s", tc.want)
			}
			// Management: the Namespace, the ConfigMap, the ClusterOperator and its status;
			// UserWorkload: the ClusterRole.
			if len(classes) != 5 || classes[4] != contract.ClassUserWorkload {
				t.Errorf("classes %v", classes)
			}
		})
	}
}
