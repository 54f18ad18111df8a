package translate_test

import (
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// TestVolumeSourcesOnManagement: a pod on the shared management cluster mounts only the
// volume sources known safe there (configMap, secret, downwardAPI, projected, emptyDir,
// persistentVolumeClaim), as it will be written; an inline CSI volume, a generic ephemeral
// volume or a network's storage is refused, with or without the profile, and also when a
// patch adds it.
func TestVolumeSourcesOnManagement(t *testing.T) {
	const hcp = "clusters-example"
	withProfile, withoutProfile := containedEngines(hcp)
	deployment := func(volumes string) contract.Mutation {
		return deploymentMutation("openshift-authentication", "server", "oauth",
			"      containers:\n      - name: server\n        image: server\n        securityContext: {readOnlyRootFilesystem: true}\n      volumes: "+volumes+"\n")
	}
	const known = "[{name: config, configMap: {name: config}}, {name: serving, secret: {secretName: serving}}, " +
		"{name: info, downwardAPI: {items: [{path: labels, fieldRef: {fieldPath: metadata.labels}}]}}, " +
		"{name: bundle, projected: {sources: [{configMap: {name: ca}}]}}, {name: tmp, emptyDir: {sizeLimit: 64Mi}}, " +
		"{name: data, persistentVolumeClaim: {claimName: data}}]"
	const csi = "[{name: cloud, csi: {driver: secrets-store.csi.k8s.io, readOnly: true, volumeAttributes: {secretProviderClass: management-cloud}}}]"
	const ephemeral = "[{name: big, ephemeral: {volumeClaimTemplate: {spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 10Ti}}}}}}]"
	for _, tc := range []landsCase{
		{"the known sources, with the profile", withProfile, []contract.Mutation{deployment(known)}, ""},
		{"the known sources, without it", withoutProfile, []contract.Mutation{deployment(known)}, ""},
		{"an inline CSI volume", withProfile, []contract.Mutation{deployment(csi)},
			"spec.template.spec.volumes[0].csi: a pod on the shared management cluster may mount configMap, secret, downwardAPI, projected, emptyDir and persistentVolumeClaim volumes; a csi volume is not known safe there"},
		{"an inline CSI volume, without the profile", withoutProfile, []contract.Mutation{deployment(csi)}, "volumes[0].csi:"},
		{"a generic ephemeral volume of 10Ti", withProfile, []contract.Mutation{deployment(ephemeral)}, "volumes[0].ephemeral:"},
		{"an NFS share, without the profile", withoutProfile, []contract.Mutation{deployment("[{name: share, nfs: {server: 10.0.0.5, path: /}}]")}, "volumes[0].nfs:"},
		{"a patch that adds an inline CSI volume (judged on what it makes)", withProfile, []contract.Mutation{
			deployment("[{name: tmp, emptyDir: {sizeLimit: 64Mi}}]"),
			mergePatchAfter("apps", "deployments", "openshift-authentication", "server",
				`{"spec": {"template": {"spec": {"volumes": [{"name": "cloud", "csi": {"driver": "secrets-store.csi.k8s.io"}}]}}}}`),
		}, "volumes[0].csi:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			landsOnManagement(t, tc.engine, tc.mutations, tc.refused)
		})
	}
}
