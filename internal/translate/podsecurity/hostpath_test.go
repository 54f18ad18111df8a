package podsecurity

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/kustomize/kyaml/yaml"
)

// TestHostPathToEmptyDir: a hostPath volume keeps its name and its mounts and gets an
// emptyDir in place of the host's directory; the result passes Pod Security restricted's
// volume rule, and other volumes are left as they are.
func TestHostPathToEmptyDir(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a host directory becomes the pod's own",
			`{volumes: [{name: audit-dir, hostPath: {path: /var/log/x, type: DirectoryOrCreate}}, {name: c, configMap: {name: c}}], containers: [{name: s, volumeMounts: [{name: audit-dir, mountPath: /var/log/x}]}]}`,
			`{volumes: [{name: audit-dir, emptyDir: {}}, {name: c, configMap: {name: c}}], containers: [{name: s, volumeMounts: [{name: audit-dir, mountPath: /var/log/x}]}]}`},
		{"the host's root too", `{volumes: [{name: root, hostPath: {path: /}}]}`, `{volumes: [{name: root, emptyDir: {}}]}`},
		{"no host path", `{volumes: [{name: c, emptyDir: {medium: Memory}}]}`, `{volumes: [{name: c, emptyDir: {medium: Memory}}]}`},
		{"no volumes", `{containers: [{name: s}]}`, `{containers: [{name: s}]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := yaml.MustParse(tc.in)
			if err := HostPathToEmptyDirEdit(nil, spec); err != nil {
				t.Fatal(err)
			}
			got, _ := spec.Map()
			want, _ := yaml.MustParse(tc.want).Map()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if reason := podSecurityReasonOf(map[string]any{"spec": got}); strings.Contains(reason, "hostPath") {
				t.Errorf("still refused for a host path: %s", reason)
			}
		})
	}
}
