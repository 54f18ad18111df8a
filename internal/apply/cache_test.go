package apply

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// cacheOf is a Cache holding some objects, by namespace/name.
type cacheOf map[string]*unstructured.Unstructured

func (c cacheOf) Cached(_ context.Context, _ schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, bool) {
	o, ok := c[namespace+"/"+name]
	if !ok {
		return nil, false
	}
	return o.DeepCopy(), true
}

var _ Cache = cacheOf(nil)

// staticMapper is a RESTMapper that knows ConfigMaps only.
type staticMapper struct{ meta.RESTMapper }

func (staticMapper) Reset() {}

// fakeClusterTarget is a ClusterTarget over a fake dynamic client that holds live.
func fakeClusterTarget(t *testing.T, opts Options, live ...runtime.Object) (*ClusterTarget, *dynamicfake.FakeDynamicClient) {
	t.Helper()
	gv := schema.GroupVersion{Version: "v1"}
	m := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	m.Add(gv.WithKind("ConfigMap"), meta.RESTScopeNamespace)
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{gv.WithResource("configmaps"): "ConfigMapList"}, live...)
	return &ClusterTarget{name: "cluster", opts: opts.defaulted(), client: client, mapper: staticMapper{m}}, client
}

// TestCachedNoOp: an entry that the target's cache shows unchanged costs no request; any
// other goes to the server as without a cache: one read, and, for the one write of a plan,
// the write alone (no dry-run: it validates itself).
func TestCachedNoOp(t *testing.T) {
	const desired = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, labels: {topolayer.dev/operator: sample}}
data: {a: "1", b: "2"}
`
	const liveYAML = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, resourceVersion: "7", labels: {topolayer.dev/operator: sample}}
data: {a: "1", b: "2"}
`
	const changed = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, resourceVersion: "7", labels: {topolayer.dev/operator: sample}}
data: {a: "1", b: "old"}
`
	const stale = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, resourceVersion: "5", labels: {topolayer.dev/operator: sample}}
data: {a: "1"}
`
	const otherOperator = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, resourceVersion: "7", labels: {topolayer.dev/operator: someone-else}}
data: {a: "1", b: "2"}
`
	for name, tc := range map[string]struct {
		action       contract.Action
		cached       string // "" for an object the cache does not hold
		live         string // the server's object; "" for liveYAML
		absent       bool   // the server has no object
		wantRequests []string
		wantStatus   Status
	}{
		"unchanged in the cache: no request":     {action: contract.ActionApply, cached: liveYAML, wantStatus: StatusSkipped},
		"unchanged in the cache, Update":         {action: contract.ActionUpdate, cached: liveYAML, wantStatus: StatusSkipped},
		"unchanged in the cache, Create of it":   {action: contract.ActionCreate, cached: liveYAML, wantStatus: StatusSkipped},
		"changed: to the server, written":        {action: contract.ActionApply, cached: changed, live: changed, wantRequests: []string{"get", "patch"}, wantStatus: StatusApplied},
		"absent from the cache: to the server":   {action: contract.ActionApply, wantRequests: []string{"get"}, wantStatus: StatusSkipped},
		"stale cache that lacks a field: server": {action: contract.ActionApply, cached: stale, wantRequests: []string{"get"}, wantStatus: StatusSkipped},
		"another operator's in the cache":        {action: contract.ActionApply, cached: otherOperator, wantRequests: []string{"get"}, wantStatus: StatusSkipped},
		"delete: to the server whatever":         {action: contract.ActionDelete, cached: liveYAML, wantRequests: []string{"get", "delete"}, wantStatus: StatusApplied},
		"delete of what is gone: a read only":    {action: contract.ActionDelete, absent: true, wantRequests: []string{"get"}, wantStatus: StatusSkipped},
	} {
		t.Run(name, func(t *testing.T) {
			cache := cacheOf{}
			if tc.cached != "" {
				cache["ns/settings"] = obj(t, tc.cached)
			}
			live := tc.live
			if live == "" {
				live = liveYAML
			}
			var objects []runtime.Object
			if !tc.absent {
				objects = append(objects, obj(t, live))
			}
			target, client := fakeClusterTarget(t, Options{Operator: "sample", Cache: cache}, objects...)
			md := contract.Metadata{Action: tc.action, Namespace: "ns", Name: "settings", ResourceType: contract.ResourceType{Version: "v1", Resource: "configmaps"}}
			e := plans.Entry{Action: tc.action, Disposition: routing.Apply, Target: plans.Target{Cluster: "cluster"}, Mutation: &contract.Mutation{Metadata: md}}
			if tc.action.CarriesObject() {
				e.Mutation.Body = []byte(desired)
				e.Object = obj(t, desired)
			}
			// The fake client does not support server-side apply: what reaches its write is
			// counted, its answer is not what this test is about.
			client.PrependReactor("patch", "configmaps", func(a k8stesting.Action) (bool, runtime.Object, error) {
				written := obj(t, liveYAML)
				written.SetResourceVersion("8") // a write that changed the object
				return true, written, nil
			})
			client.PrependReactor("delete", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, nil
			})
			res, _ := ApplyPlan(t.Context(), planOf(e), map[string]Target{"cluster": target})
			var verbs []string
			for _, a := range client.Actions() {
				verbs = append(verbs, a.GetVerb())
			}
			if !slices.Equal(verbs, tc.wantRequests) {
				t.Errorf("requests %v, want %v", verbs, tc.wantRequests)
			}
			if len(res) != 1 {
				t.Fatalf("results %+v", res)
			}
			if res[0].Status != tc.wantStatus {
				t.Errorf("status %s (%v), want %s", res[0].Status, res[0].Err, tc.wantStatus)
			}
		})
	}
}

// TestCachedNoOpAfterWrite: an entry whose object an earlier entry of the plan wrote is read
// from the server, even when validation found it unchanged in the cache: the cache may not
// have seen that write yet.
func TestCachedNoOpAfterWrite(t *testing.T) {
	const cached = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, resourceVersion: "5"}
data: {a: "1", b: "2"}
`
	const live = `
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: ns, resourceVersion: "7"}
data: {a: "1", b: "old"}
`
	target, client := fakeClusterTarget(t, Options{Cache: cacheOf{"ns/settings": obj(t, cached)}}, obj(t, live))
	client.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, obj(t, cached), nil
	})
	apply := func(body string) plans.Entry {
		md := contract.Metadata{Action: contract.ActionApply, Namespace: "ns", Name: "settings", ResourceType: contract.ResourceType{Version: "v1", Resource: "configmaps"}}
		return plans.Entry{Action: md.Action, Disposition: routing.Apply, Target: plans.Target{Cluster: "cluster"}, Mutation: &contract.Mutation{Metadata: md, Body: []byte(body)}, Object: obj(t, body)}
	}
	first := apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: ns}\ndata: {c: \"3\"}\n")
	second := apply("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: ns}\ndata: {a: \"1\", b: \"2\"}\n")
	res, err := ApplyPlan(t.Context(), planOf(first, second), map[string]Target{"cluster": target})
	if err != nil {
		t.Fatal(err)
	}
	var verbs []string
	for _, a := range client.Actions() {
		verbs = append(verbs, a.GetVerb())
	}
	// first: read, dry-run, write; second (unchanged in the cache at validation): read again.
	if want := []string{"get", "patch", "patch", "get"}; len(verbs) < len(want) || !slices.Equal(verbs[:len(want)], want) {
		t.Errorf("requests %v, want %v first", verbs, want)
	}
	if res[0].Status != StatusApplied {
		t.Errorf("first entry %s", res[0].Status)
	}
}
