package config_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/config"
)

// FuzzParse: any bytes parse or fail without panicking, every refusal names its problem, and a
// configuration that parses is written back and parses again to the same value (defaulting is
// idempotent, and nothing accepted is lost in the written form).
func FuzzParse(f *testing.F) {
	examples, _ := filepath.Glob("../examples/*.yaml")
	for _, file := range examples {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(header + hostedTopology + "routing:\n  clusterRBAC: Reject\n  rules:\n  - {name: r, match: {group: \"\", resource: secrets, namespace: \"openshift-*\"}, cluster: guest, priority: 3}\n"))
	f.Add([]byte(header + hostedTopology + "transforms:\n  profiles: []\n  patches:\n  - name: p\n    match: {resource: deployments}\n    json6902: '[{\"op\": \"add\", \"path\": \"/spec/x\", \"value\": 1}]'\n  - name: q\n    strategicMerge: 'spec: {replicas: 1}'\n"))
	f.Add([]byte(header + hostedTopology + "namespaces:\n  aliases:\n  - {group: \"\", resource: secrets, namespace: a, name: b, hostedName: c}\n"))
	f.Add([]byte(header + "operators:\n- name: a\n  command: [x]\n  env: {A: b}\n  controllers: [c]\n  serviceAccount: ns/sa\n  limits: {timeout: 1m, memory: 1Gi, outputSize: 1Mi}\nscheduler: {debounce: 1s, cooldown: 0s, maxConcurrent: 1, mutationsPerMinute: -1, hotLoopThreshold: 2}\nmanager: {namespace: x, workDir: /tmp, metricsAddress: \"0\", leaderElection: false}\n"))
	f.Add([]byte(header + hostedTopology + "gather:\n  projections:\n  - {group: config.openshift.io, version: v1, resource: oauths, kind: OAuth, name: cluster, field: spec, from: spec.configuration.oauth}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("refused without a message")
			}
			return
		}
		written, err := yaml.Marshal(cfg)
		if err != nil {
			t.Fatalf("an accepted configuration does not marshal: %v", err)
		}
		again, err := config.Parse(written)
		if err != nil {
			t.Fatalf("a written configuration is refused: %v\ninput:\n%s\nwritten:\n%s", err, data, written)
		}
		if !reflect.DeepEqual(cfg, again) {
			rewritten, _ := yaml.Marshal(again)
			t.Fatalf("writing changed the configuration:\ninput:\n%s\nwritten:\n%s\nread back and written:\n%s", data, written, rewritten)
		}
	})
}
