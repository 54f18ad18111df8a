package apply

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

const caoEvent = `apiVersion: v1
kind: Event
metadata: {name: authentication-operator.1, namespace: hcp, uid: u1}
involvedObject: {kind: Deployment, name: authentication-operator, namespace: openshift-authentication-operator}
reason: DeploymentCreated
message: Created Deployment.apps/oauth-openshift because it was missing
type: Normal
source: {component: cluster-authentication-operator-run-once-sync-context}
count: 3
lastTimestamp: "2026-01-01T00:00:00Z"
`

func TestEventKey(t *testing.T) {
	base := obj(t, caoEvent)
	cases := map[string]struct {
		edit func(*unstructured.Unstructured)
		same bool
	}{
		"another name, count and time": {func(u *unstructured.Unstructured) {
			u.SetName("authentication-operator.2")
			_ = unstructured.SetNestedField(u.Object, int64(1), "count")
			_ = unstructured.SetNestedField(u.Object, "2026-01-02T00:00:00Z", "lastTimestamp")
		}, true},
		"another message": {func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "Updated", "message")
		}, false},
		"another reason": {func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "X", "reason") }, false},
		"another type":   {func(u *unstructured.Unstructured) { _ = unstructured.SetNestedField(u.Object, "Warning", "type") }, false},
		"another object": {func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "other", "involvedObject", "name")
		}, false},
		"another source": {func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "other", "source", "component")
		}, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			other := base.DeepCopy()
			tc.edit(other)
			if got := eventKey(other) == eventKey(base); got != tc.same {
				t.Errorf("same key = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestFolded(t *testing.T) {
	repeat := obj(t, caoEvent)
	desire := obj(t, caoEvent)
	_ = unstructured.SetNestedField(desire.Object, "2026-01-05T00:00:00Z", "lastTimestamp")
	for name, tc := range map[string]struct {
		repeats   int
		wantCount int64
	}{
		"one repeat":           {1, 4},
		"three in one plan":    {3, 6},
		"unset counts as once": {0, 4},
	} {
		t.Run(name, func(t *testing.T) {
			w := &writer{desire: desire, repeat: repeat, repeats: tc.repeats}
			got := w.folded(time.Date(2026, 1, 6, 0, 0, 0, 0, time.UTC))
			if n, _, _ := unstructured.NestedInt64(got.Object, "count"); n != tc.wantCount {
				t.Errorf("count = %d, want %d", n, tc.wantCount)
			}
			if ts, _, _ := unstructured.NestedString(got.Object, "lastTimestamp"); ts != "2026-01-05T00:00:00Z" {
				t.Errorf("lastTimestamp = %s, want the new Event's", ts)
			}
			if got.GetName() != repeat.GetName() || got.GetUID() != repeat.GetUID() {
				t.Errorf("folded into %s/%s, want the repeated Event", got.GetName(), got.GetUID())
			}
		})
	}
}

// A plan whose other entries change nothing drops its folds; one that writes anything but
// Events keeps them, one write per repeated Event.
func TestDropIdleRepeats(t *testing.T) {
	fold := func(uid string) *writer {
		r := &unstructured.Unstructured{Object: map[string]any{}}
		r.SetUID(types.UID(uid))
		return &writer{repeat: r, decided: Result{Change: ChangeFold, Live: r}}
	}
	unchanged := func() *writer { return &writer{decided: Result{Change: ChangeNone, Skipped: true}} }
	update := func() *writer { return &writer{decided: Result{Change: ChangeUpdate}} }
	cases := map[string]struct {
		writers   []*writer
		wantFolds int // folds left
		wantCount int // repeats the first fold counts, when kept
	}{
		"only repeats and unchanged objects": {[]*writer{unchanged(), fold("a"), fold("b"), unchanged()}, 0, 0},
		"a change keeps the folds":           {[]*writer{update(), fold("a"), fold("b")}, 2, 1},
		"repeats of one Event are one fold":  {[]*writer{update(), fold("a"), fold("a"), fold("a")}, 1, 3},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			results := make([]EntryResult, len(tc.writers))
			for i, w := range tc.writers {
				results[i].Status, results[i].Change = StatusValid, w.decided.Change
			}
			dropIdleRepeats(results, tc.writers)
			folds := 0
			for i, w := range tc.writers {
				if w.decided.Change == ChangeFold {
					folds++
					if i == 1 && w.repeats != tc.wantCount {
						t.Errorf("the fold counts %d repeats, want %d", w.repeats, tc.wantCount)
					}
				}
				if results[i].Change != w.decided.Change {
					t.Errorf("entry %d: result %s, writer %s", i, results[i].Change, w.decided.Change)
				}
			}
			if folds != tc.wantFolds {
				t.Errorf("%d folds left, want %d", folds, tc.wantFolds)
			}
		})
	}
}
