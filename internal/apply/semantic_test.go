package apply

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// The operator CR of these tests, in parts: its head, the spec the operator applies (a set
// of scalars, an atomic list and a map list keyed by name), and its conditions as a run at
// 10:00 stamped them.
const (
	crHead = `
apiVersion: operator.openshift.io/v1
kind: Authentication
metadata:
  name: cluster
`
	crSpec = `spec:
  finalizers: [a, b]
  order: [a, b]
  endpoints:
  - {name: alpha, url: "https://alpha"}
  - {name: beta, url: "https://beta"}
`
	crStatus = `status:
  conditions:
  - {type: Available, status: "True", reason: AsExpected, message: ok, lastTransitionTime: "2026-01-01T10:00:00Z"}
  - {type: Degraded, status: "False", reason: AsExpected, message: "", lastTransitionTime: "2026-01-01T10:00:00Z"}
`
)

// liveOperatorCR is the operator CR as a previous run left it: its spec and its conditions
// stamped at 10:00, recorded as such in managedFields.
const liveOperatorCR = crHead + `  resourceVersion: "5"
  managedFields:
  - manager: op
    operation: Apply
    apiVersion: operator.openshift.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:finalizers:
          v:"a": {}
          v:"b": {}
        f:order: {}
        f:endpoints:
          'k:{"name":"alpha"}': {.: {}, f:name: {}, f:url: {}}
          'k:{"name":"beta"}': {.: {}, f:name: {}, f:url: {}}
  - manager: op
    operation: Apply
    apiVersion: operator.openshift.io/v1
    subresource: status
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:conditions:
          'k:{"type":"Available"}': {.: {}, f:type: {}, f:status: {}, f:reason: {}, f:message: {}, f:lastTransitionTime: {}}
          'k:{"type":"Degraded"}': {.: {}, f:type: {}, f:status: {}, f:reason: {}, f:message: {}, f:lastTransitionTime: {}}
` + crSpec + crStatus

// restamped is what the operator's next offline run writes: the same conditions with --now.
var restamped = crHead + strings.ReplaceAll(crStatus, "T10:00:00Z", "T11:00:00Z")

// appliedSpec is what the operator applies of its spec, unchanged.
const appliedSpec = crHead + crSpec

func TestSemanticNoOp(t *testing.T) {
	live := obj(t, liveOperatorCR)
	for name, tc := range map[string]struct {
		body, subresource string
		want              bool
	}{
		"condition times only moved": {body: restamped, subresource: "status", want: true},
		"a condition type replaced":  {body: strings.Replace(strings.Replace(restamped, "type: Available", "type: X", 1), "type: Degraded", "type: Available", 1), subresource: "status"},
		"conditions in another order": {body: crHead + `status:
  conditions:
  - {type: Degraded, status: "False", reason: AsExpected, message: "", lastTransitionTime: "2026-01-01T12:00:00Z"}
  - {type: Available, status: "True", reason: AsExpected, message: ok, lastTransitionTime: "2026-01-01T12:00:00Z"}
`, subresource: "status", want: true},
		"a real transition":      {body: strings.Replace(restamped, `status: "False"`, `status: "True"`, 1), subresource: "status"},
		"a new reason":           {body: strings.Replace(restamped, "reason: AsExpected, message: ok", "reason: Other, message: ok", 1), subresource: "status"},
		"a new message":          {body: strings.Replace(restamped, "message: ok", "message: changed", 1), subresource: "status"},
		"a new condition":        {body: restamped + "  - {type: Progressing, status: \"False\", lastTransitionTime: \"2026-01-01T11:00:00Z\"}\n", subresource: "status"},
		"spec unchanged":         {body: appliedSpec, want: true},
		"set reordered":          {body: strings.Replace(appliedSpec, "finalizers: [a, b]", "finalizers: [b, a]", 1), want: true},
		"set changed":            {body: strings.Replace(appliedSpec, "finalizers: [a, b]", "finalizers: [b, c]", 1)},
		"map list item replaced": {body: strings.Replace(strings.Replace(appliedSpec, "name: alpha, url: \"https://alpha\"", "name: z", 1), "name: beta, url: \"https://beta\"", "name: alpha, url: \"https://alpha\"", 1)},
		"atomic list reordered":  {body: strings.Replace(appliedSpec, "order: [a, b]", "order: [b, a]", 1)},
		"map list items swapped": {body: strings.Replace(appliedSpec, "  - {name: alpha, url: \"https://alpha\"}\n  - {name: beta, url: \"https://beta\"}\n",
			"  - {name: beta, url: \"https://beta\"}\n  - {name: alpha, url: \"https://alpha\"}\n", 1), want: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := AppliedNoOp(obj(t, tc.body), live, "op", tc.subresource); got != tc.want {
				t.Errorf("AppliedNoOp = %v, want %v", got, tc.want)
			}
			updated := obj(t, tc.body)
			if tc.subresource == "" {
				// A PUT holds the whole object: the status it reads back as is.
				updated.Object["status"] = live.Object["status"]
			}
			if got := UpdatedNoOp(updated, live, tc.subresource); got != tc.want {
				t.Errorf("UpdatedNoOp = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCarryTransitionTimes(t *testing.T) {
	live := obj(t, liveOperatorCR)
	const liveTime, now = "2026-01-01T10:00:00Z", "2026-01-01T11:00:00Z"
	for name, tc := range map[string]struct {
		desire string
		want   map[string]string // lastTransitionTime by condition type
	}{
		"unchanged conditions keep the live time": {desire: restamped, want: map[string]string{"Available": liveTime, "Degraded": liveTime}},
		"a transition keeps its own time": {
			desire: strings.Replace(restamped, `status: "False"`, `status: "True"`, 1),
			want:   map[string]string{"Available": liveTime, "Degraded": now},
		},
		"a new message keeps the live time": {
			desire: strings.Replace(restamped, "message: ok", "message: other", 1),
			want:   map[string]string{"Available": liveTime, "Degraded": liveTime},
		},
		"a new reason keeps the live time": {
			desire: strings.Replace(restamped, "reason: AsExpected, message: ok", "reason: Other, message: ok", 1),
			want:   map[string]string{"Available": liveTime, "Degraded": liveTime},
		},
		"a condition the live object lacks": {
			desire: restamped + "  - {type: Progressing, status: \"False\", lastTransitionTime: \"2026-01-01T11:00:00Z\"}\n",
			want:   map[string]string{"Available": liveTime, "Degraded": liveTime, "Progressing": now},
		},
		"nested conditions": {
			desire: "apiVersion: v1\nkind: X\nstatus:\n  nested:\n    conditions:\n    - {type: Available, status: \"True\", lastTransitionTime: \"2026-01-01T11:00:00Z\"}\n",
			want:   map[string]string{"Available": now},
		},
	} {
		t.Run(name, func(t *testing.T) {
			desire := obj(t, tc.desire)
			before := desire.DeepCopy()
			got := CarryTransitionTimes(desire, live)
			if diff := cmp.Diff(before.Object, desire.Object); diff != "" {
				t.Errorf("desire modified:\n%s", diff)
			}
			times := map[string]string{}
			collectTimes(got.Object["status"], times)
			if diff := cmp.Diff(tc.want, times); diff != "" {
				t.Errorf("lastTransitionTime by type (-want +got):\n%s", diff)
			}
		})
	}
	if CarryTransitionTimes(nil, live) != nil {
		t.Error("nil desire: want nil")
	}
}

// collectTimes gathers the lastTransitionTime of every condition under v by type.
func collectTimes(v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if l, ok := c.([]any); ok && k == "conditions" {
				for _, item := range l {
					m := item.(map[string]any)
					out[m["type"].(string)], _ = m["lastTransitionTime"].(string)
				}
				continue
			}
			collectTimes(c, out)
		}
	}
}

// TestSemanticNoOpSharedList: a status written by many field managers (one per controller of
// a library-go operator), each applying its own conditions. An apply that holds a manager's
// own conditions, unchanged, is a no-op whatever the others own.
func TestSemanticNoOpSharedList(t *testing.T) {
	shared := strings.Replace(liveOperatorCR, "\nspec:\n", `
  - manager: other
    operation: Apply
    apiVersion: operator.openshift.io/v1
    subresource: status
    fieldsType: FieldsV1
    fieldsV1:
      f:status:
        f:conditions:
          'k:{"type":"Progressing"}': {.: {}, f:type: {}, f:status: {}, f:lastTransitionTime: {}}
spec:
`, 1) + `  - {type: Progressing, status: "False", lastTransitionTime: "2026-01-01T10:00:00Z"}
`
	live := obj(t, shared)
	onlyAvailable := strings.Replace(restamped, "  - {type: Degraded", "  #", 1)
	progressing := crHead + `status:
  conditions:
  - {type: Progressing, status: "False", lastTransitionTime: "2026-01-01T12:00:00Z"}
`
	for name, tc := range map[string]struct {
		body, manager string
		want          bool
	}{
		"its own conditions, restamped":           {body: restamped, manager: "op", want: true},
		"another manager's condition, restamped":  {body: progressing, manager: "other", want: true},
		"one of its own conditions dropped":       {body: onlyAvailable, manager: "op"},
		"one of its own conditions transitioned":  {body: strings.Replace(restamped, `status: "False"`, `status: "True"`, 1), manager: "op"},
		"another manager's condition transitions": {body: strings.Replace(progressing, `status: "False"`, `status: "True"`, 1), manager: "other"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := AppliedNoOp(obj(t, tc.body), live, tc.manager, "status"); got != tc.want {
				t.Errorf("AppliedNoOp = %v, want %v", got, tc.want)
			}
		})
	}
	// A PUT of the status replaces the whole list: without the other manager's condition it
	// removes it.
	if UpdatedNoOp(obj(t, restamped), live, "status") {
		t.Error("UpdatedNoOp: a status without another manager's condition is a no-op")
	}
}

// TestAppliedNoOpDefaultedKey: an applied list item that leaves out a key field the server
// defaults (a Service port's protocol) is the live item whose key the manager's last apply
// recorded, and only that one.
func TestAppliedNoOpDefaultedKey(t *testing.T) {
	live := func(protocol string) *unstructured.Unstructured {
		return obj(t, `
apiVersion: v1
kind: Service
metadata:
  name: sample
  namespace: ns
  managedFields:
  - manager: op
    operation: Apply
    apiVersion: v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec:
        f:ports:
          'k:{"port":443,"protocol":"TCP"}': {.: {}, f:name: {}, f:port: {}, f:targetPort: {}}
spec:
  clusterIP: 10.0.0.1
  ports:
  - {name: https, port: 443, protocol: `+protocol+`, targetPort: https}
`)
	}
	const applied = `
apiVersion: v1
kind: Service
metadata: {name: sample, namespace: ns}
spec:
  ports:
  - {name: https, port: 443, targetPort: https}
`
	for name, tc := range map[string]struct {
		live          *unstructured.Unstructured
		body, manager string
		want          bool
	}{
		"protocol defaulted to what the manager's apply recorded": {live: live("TCP"), body: applied, manager: "op", want: true},
		"another protocol than the recorded key":                  {live: live("UDP"), body: applied, manager: "op"},
		"another manager: its key is not recorded":                {live: live("TCP"), body: applied, manager: "someone"},
		"another port":       {live: live("TCP"), body: strings.Replace(applied, "port: 443", "port: 444", 1), manager: "op"},
		"the protocol given": {live: live("TCP"), body: strings.Replace(applied, "port: 443,", "port: 443, protocol: TCP,", 1), manager: "op", want: true},
	} {
		t.Run(name, func(t *testing.T) {
			if got := AppliedNoOp(obj(t, tc.body), tc.live, tc.manager, ""); got != tc.want {
				t.Errorf("AppliedNoOp = %v, want %v", got, tc.want)
			}
		})
	}
}
