package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestGatherValidate(t *testing.T) {
	base := GatherOptions{ConfigFile: "c", InputResourcesFile: "i", To: "d", Operator: "op"}
	hosted := base
	hosted.ManagementKubeconfig, hosted.GuestKubeconfig = "m", "g"
	standalone := base
	standalone.Kubeconfig = "k"
	half := base
	half.ManagementKubeconfig = "m"
	both := hosted
	both.Kubeconfig = "k"
	tests := []struct {
		name string
		o    GatherOptions
		want []string
	}{
		{"none", GatherOptions{}, []string{"--config is required", "--input-resources is required", "--to is required", "--operator is required"}},
		{"hosted", hosted, nil},
		{"standalone", standalone, nil},
		{"half", half, []string{"go together"}},
		{"both", both, []string{"exclusive"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { checkErr(t, tt.o.Validate(), tt.want) })
	}
}

func TestGatherCommandFlags(t *testing.T) {
	var out, errOut bytes.Buffer
	cmd := NewCmdGather(IOStreams{Out: &out, ErrOut: &errOut})
	cmd.SetArgs([]string{"--config", "x"})
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--input-resources is required") {
		t.Fatalf("err = %v", err)
	}
	for _, f := range []string{"config", "input-resources", "output-resources", "operator", "to", "overwrite", "kubeconfig", "management-kubeconfig", "guest-kubeconfig"} {
		if cmd.Flags().Lookup(f) == nil {
			t.Errorf("flag --%s missing", f)
		}
	}
}
