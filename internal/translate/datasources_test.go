package translate_test

import (
	"strings"
	"testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/policy"
)

// TestVolumeDataSources: the volume a claim clones follows the name mapping like a field
// reference, in a claim, a StatefulSet's volumeClaimTemplates and a generic ephemeral volume;
// on the management cluster a source in another namespace, or of a kind the engine cannot
// map, is refused with the field named. The guest is the operator's own cluster.
func TestVolumeDataSources(t *testing.T) {
	const ns, hcp = "openshift-sample", "clusters-example"
	engine := profileEngine(hcp, &policy.Policy{})
	pvc := func(class contract.Class, source string) contract.Mutation {
		m := policyMutation(contract.ActionApply, "", "persistentvolumeclaims", ns, "data",
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: data, namespace: "+ns+"}\n"+
				"spec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n"+source)
		m.Class = class
		return m
	}
	statefulSet := policyMutation(contract.ActionApply, "apps", "statefulsets", ns, "db",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: "+ns+"}\nspec:\n  selector: {matchLabels: {app: db}}\n  serviceName: db\n"+
			"  template:\n    metadata: {labels: {app: db}}\n    spec:\n      containers: [{name: db, image: db}]\n"+
			"      volumes:\n      - {name: host, hostPath: {path: /var/log}}\n      - name: scratch\n        ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}, dataSource: {kind: PersistentVolumeClaim, name: seed}}}}\n"+
			"  volumeClaimTemplates:\n  - metadata: {name: data}\n    spec:\n      accessModes: [ReadWriteOnce]\n      resources: {requests: {storage: 1Gi}}\n      dataSourceRef: {kind: PersistentVolumeClaim, name: seed}\n")
	for _, tc := range []struct {
		name       string
		m          contract.Mutation
		wantReason string            // rejected by policy.RuleVolumeDataSource naming it; "" applied
		wantNames  map[string]string // JSON pointer in the final object -> name
	}{
		{"a claim clones a claim of its namespace", pvc(contract.ClassManagement, "  dataSource: {kind: PersistentVolumeClaim, name: seed}\n"), "",
			map[string]string{"spec.dataSource.name": ns + "--seed"}},
		{"dataSourceRef too", pvc(contract.ClassManagement, "  dataSourceRef: {apiGroup: \"\", kind: PersistentVolumeClaim, name: etcd-data}\n"), "",
			map[string]string{"spec.dataSourceRef.name": ns + "--etcd-data"}},
		{"another namespace", pvc(contract.ClassManagement, "  dataSourceRef: {kind: PersistentVolumeClaim, name: data-etcd-0, namespace: "+hcp+"}\n"),
			"spec.dataSourceRef: clones from namespace " + hcp, nil},
		{"a snapshot, whose names the engine does not map", pvc(contract.ClassManagement, "  dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: etcd-backup}\n"),
			"spec.dataSource: clones a VolumeSnapshot.snapshot.storage.k8s.io", nil},
		{"the guest: the operator's own volumes", pvc(contract.ClassUserWorkload, "  dataSource: {apiGroup: snapshot.storage.k8s.io, kind: VolumeSnapshot, name: backup}\n"), "", nil},
		{"a StatefulSet's claim templates and ephemeral volumes", statefulSet, "",
			map[string]string{"spec.volumeClaimTemplates.0.spec.dataSourceRef.name": ns + "--seed", "spec.template.spec.volumes.1.ephemeral.volumeClaimTemplate.spec.dataSource.name": ns + "--seed"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantRule := ""
			if tc.wantReason != "" {
				wantRule = policy.RuleVolumeDataSource
			}
			e, applied := planAlone(t, engine, tc.m, wantRule, tc.wantReason)
			if !applied {
				return
			}
			for path, want := range tc.wantNames {
				var v any = e.Object.Object
				for _, seg := range strings.Split(path, ".") {
					switch c := v.(type) {
					case map[string]any:
						v = c[seg]
					case []any:
						v = c[int(seg[0]-'0')]
					}
				}
				if v != want {
					t.Errorf("%s = %v, want %s", path, v, want)
				}
			}
		})
	}
}
