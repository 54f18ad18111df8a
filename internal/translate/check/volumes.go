package check

import (
	"fmt"
	"maps"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/podspec"
	"github.com/topolayer/topolayer/namespaces"
)

// managementVolumeSource says whether a pod on the shared management cluster may use a
// volume of this source: what a control-plane component is made of (its configuration and
// Secrets, its own metadata, its bounded scratch space, its claims in the HCP namespace).
// Not known safe there, and so refused: an inline CSI volume (csi), whose driver runs with
// the node's and the driver's own credentials (a secrets-store driver reads the management
// cluster's cloud secrets); a generic ephemeral volume (ephemeral), whose claim the
// management cluster's storage provisions without any bound; and every node or network
// source (hostPath, nfs, iscsi, ...), which Pod Security restricted refuses too.
func managementVolumeSource(source string) bool {
	switch source {
	case "configMap", "secret", "downwardAPI", "projected", "emptyDir", "persistentVolumeClaim":
		return true
	}
	return false
}

// restrictedVolumeSource says whether Pod Security's restricted level allows a volume of
// this source (k8s.io/pod-security-admission's restrictedVolumes check): the sources a pod
// may use when Pod Security is checked, of which managementVolumeSource allows all but csi
// and ephemeral.
func restrictedVolumeSource(source string) bool {
	switch source {
	case "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret":
		return true
	}
	return false
}

// volumeSources returns why a pod of obj, as it will be on the management cluster at target
// (sites, its pod specs: podspec.SitesOf), uses a volume source managementVolumeSource does
// not allow, naming the field; "" when it uses none, or for a shadow copy at target. With
// podSecurity (the policy checks Pod Security after this check) a source restricted refuses
// too is left to that check, which names every field restricted forbids.
func volumeSources(obj *unstructured.Unstructured, sites []podspec.Site, target contract.Identity, podSecurity bool) string {
	if _, shadow := namespaces.IsShadowGroup(target.Group); shadow {
		return "" // nothing runs a shadow copy's pods
	}
	for _, site := range sites {
		spec, _ := site.Spec.Get(obj.Object).(map[string]any)
		volumes := listAt(spec, "volumes")
		for i, v := range volumes {
			m, _ := v.(map[string]any)
			for _, source := range slices.Sorted(maps.Keys(m)) {
				if source == "name" || managementVolumeSource(source) || podSecurity && !restrictedVolumeSource(source) {
					continue
				}
				return fmt.Sprintf("%s.volumes[%d].%s: a pod on the shared management cluster may mount configMap, secret, downwardAPI, projected, emptyDir and persistentVolumeClaim volumes; a %s volume is not known safe there",
					site.Spec, i, source, source)
			}
		}
	}
	return ""
}
