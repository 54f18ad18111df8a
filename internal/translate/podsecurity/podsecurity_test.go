package podsecurity

import (
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	psaapi "k8s.io/pod-security-admission/api"
	psapolicy "k8s.io/pod-security-admission/policy"

	"github.com/topolayer/topolayer/contract"
)

// TestPodSecurityUncheckedFields: Pod Security judges a pod template without the container
// fields no check reads as it judges the whole template, and the trimming leaves the template
// as it was.
func TestPodSecurityUncheckedFields(t *testing.T) {
	for _, spec := range []string{
		"containers: [{name: c, image: i, args: [a], command: [b], env: [{name: E, value: v}], resources: {limits: {cpu: 1}}, volumeMounts: [{name: v, mountPath: /v}]}]",
		"containers: [{name: c, image: i, securityContext: {privileged: true}, env: [{name: E}]}]",
		"containers: [{name: c, image: i, ports: [{containerPort: 80, hostPort: 80}], envFrom: [{secretRef: {name: s}}]}]",
		"hostNetwork: true\ncontainers: [{name: c, image: i}]",
		"volumes: [{name: v, hostPath: {path: /}}]\ncontainers: [{name: c, image: i, volumeMounts: [{name: v, mountPath: /v}]}]",
		"securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\ncontainers: [{name: c, image: i, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}, livenessProbe: {httpGet: {host: 10.0.0.1, port: 80}}}]",
		"securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}\ncontainers: [{name: c, image: i, securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}, env: [{name: E}]}]\ninitContainers: [{name: i, image: i, command: [x], securityContext: {capabilities: {add: [NET_ADMIN]}}}]",
		"nodeName: n\ncontainers: [{name: c, image: i, env: not-a-list}]",
		"containers: not-a-list",
	} {
		obj, err := contract.ParseObject([]byte("metadata: {labels: {a: b}}\nspec:\n  " + strings.ReplaceAll(spec, "\n", "\n  ") + "\n"))
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		pristine := runtime.DeepCopyJSON(obj)
		trimmed := podSecurityReasonOf(withoutUncheckedFields(obj))
		if whole := podSecurityReasonOf(obj); trimmed != whole && !strings.Contains(whole, "decode") {
			t.Errorf("%q: trimmed %q, whole %q", spec, trimmed, whole)
		}
		if !reflect.DeepEqual(obj, pristine) {
			t.Errorf("%q: the template changed", spec)
		}
	}
}

// podSecurityReasonOf is podSecurityReason of a template, converted whole.
func podSecurityReasonOf(tmpl map[string]any) string {
	var pt corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pt); err != nil {
		return "decode: " + err.Error()
	}
	results := evaluator.EvaluatePod(psaapi.LevelVersion{Level: psaapi.LevelRestricted, Version: psaapi.LatestVersion()}, &pt.ObjectMeta, &pt.Spec)
	agg := psapolicy.AggregateCheckResults(results)
	return agg.ForbiddenDetail() + "|" + pt.Spec.NodeName
}
