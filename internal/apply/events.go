package apply

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/namespaces"
)

// An operator run offline records its events with a new recorder every run: each Event it
// writes has a new name, so a repeat of yesterday's "Created Deployment" would be a new
// object on every run. A resident operator's recorder (client-go's record.EventCorrelator)
// folds repeats into the Event it wrote first: count+1 and a new lastTimestamp. The target
// does the same with the Events on the cluster, which outlive the runs: a Create of a core
// Event that repeats one the same operator wrote there (eventKey: the fields of the
// correlator's event key) is folded into it (ChangeFold, a PUT of the live Event) instead of
// creating a new one. ApplyPlan then drops the folds of a plan that writes nothing else
// (see dropIdleRepeats): the run changed nothing, and a resident operator's controllers
// emit no event for an apply that is a no-op.

// foldsEvents reports whether the write is a Create of a named core Event: the writes that
// may repeat one already on the cluster.
func (w *writer) foldsEvents() bool {
	id := w.m.Identity()
	return w.m.Metadata.Action == contract.ActionCreate && w.m.Metadata.Name != "" && w.desire != nil &&
		id.Group == "" && id.Resource == "events" && w.namespaced
}

// findRepeat returns the Event of the write's namespace that the Event to write repeats:
// the same eventKey and the same operator (namespaces.LabelOperator; where the writes carry
// no such label, standalone, an Event without it), nil when there is none. When several do
// (written before events were folded), the one seen last is chosen.
func (w *writer) findRepeat(ctx context.Context) (*unstructured.Unstructured, error) {
	d := w.desire
	str := func(path ...string) string { s, _, _ := unstructured.NestedString(d.Object, path...); return s }
	sel := fields.Set{
		"involvedObject.kind": str("involvedObject", "kind"),
		"involvedObject.name": str("involvedObject", "name"),
		"reason":              str("reason"),
		"type":                str("type"),
	}
	if ns := str("involvedObject", "namespace"); ns != "" {
		sel["involvedObject.namespace"] = ns
	}
	list, err := w.ri.List(ctx, metav1.ListOptions{FieldSelector: sel.AsSelector().String()})
	if err != nil {
		return nil, fmt.Errorf("look for the Event it repeats: %w", err)
	}
	key, op := eventKey(d), d.GetLabels()[namespaces.LabelOperator]
	var found *unstructured.Unstructured
	for i := range list.Items {
		e := &list.Items[i]
		if e.GetLabels()[namespaces.LabelOperator] != op || eventKey(e) != key {
			continue
		}
		if found == nil || lastSeen(e).After(lastSeen(found)) {
			found = e
		}
	}
	return found, nil
}

// eventKey is what makes two Events the same event, as client-go's event correlator keys
// them (record's getEventKey, unexported): the source (component and host, or the
// reporting controller and instance), the involved object, the type, the reason and the
// message.
func eventKey(e *unstructured.Unstructured) string {
	var parts []string
	for _, p := range [][]string{
		{"source", "component"}, {"source", "host"}, {"reportingComponent"}, {"reportingInstance"},
		{"involvedObject", "kind"}, {"involvedObject", "namespace"}, {"involvedObject", "name"},
		{"involvedObject", "uid"}, {"involvedObject", "apiVersion"}, {"involvedObject", "fieldPath"},
		{"type"}, {"reason"}, {"message"},
	} {
		s, _, _ := unstructured.NestedString(e.Object, p...)
		parts = append(parts, s)
	}
	return strings.Join(parts, "\x00")
}

// lastSeen is when an Event was last observed: its lastTimestamp, else its eventTime.
func lastSeen(e *unstructured.Unstructured) time.Time {
	for _, p := range [][]string{{"lastTimestamp"}, {"series", "lastObservedTime"}, {"eventTime"}, {"firstTimestamp"}} {
		if s, _, _ := unstructured.NestedString(e.Object, p...); s != "" {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return t
			}
		}
	}
	return e.GetCreationTimestamp().Time
}

// folded returns the repeated Event as the fold writes it: count+1 (+n for n repeats in
// the plan) and the new Event's
// lastTimestamp (its eventTime, or now, when it has none), and for an Event with a series
// its count and lastObservedTime, as the correlator and the events.k8s.io recorder do.
func (w *writer) folded(now time.Time) *unstructured.Unstructured {
	out := w.repeat.DeepCopy()
	count := countAt(out.Object, "count")
	_ = unstructured.SetNestedField(out.Object, max(count, 1)+int64(max(w.repeats, 1)), "count")
	at := now.UTC().Format(time.RFC3339)
	for _, p := range [][]string{{"lastTimestamp"}, {"eventTime"}} {
		if s, _, _ := unstructured.NestedString(w.desire.Object, p...); s != "" {
			at = s
			break
		}
	}
	_ = unstructured.SetNestedField(out.Object, at, "lastTimestamp")
	if series, ok, _ := unstructured.NestedMap(out.Object, "series"); ok {
		n := countAt(series, "count")
		series["count"] = max(n, 1) + int64(max(w.repeats, 1))
		series["lastObservedTime"] = now.UTC().Format("2006-01-02T15:04:05.000000Z")
		_ = unstructured.SetNestedMap(out.Object, series, "series")
	}
	return out
}

// sendFold writes the fold: a PUT of the repeated Event with its resourceVersion.
func (w *writer) sendFold(ctx context.Context, dry bool) (*unstructured.Unstructured, error) {
	return w.ri.Update(ctx, w.folded(time.Now()), metav1.UpdateOptions{DryRun: dryRunOpt(dry), FieldManager: w.t.opts.FieldManager})
}

// dropIdleRepeats skips the folds of a plan whose other entries all change nothing: the
// run wrote nothing but repeats of its events, which a resident operator would not have
// emitted (its controllers record an event when they write, and an apply that changes
// nothing writes nothing). A plan that writes anything besides Events keeps its folds:
// they count the repeat. New Events (no repeat on the cluster) are always created.
//
// A plan that repeats one Event several times folds them all into one write (count+n):
// the writes of the same live Event would conflict.
func dropIdleRepeats(results []EntryResult, writers []*writer) {
	var folds []int
	first := map[string]*writer{} // by the repeated Event's uid
	skip := func(i int) { skipRepeat(results, writers, i) }
	idle := true
	for i, r := range results {
		w := writers[i]
		switch {
		case w != nil && w.decided.Change == ChangeFold:
			if f, ok := first[string(w.repeat.GetUID())]; ok {
				f.repeats++
				skip(i)
				continue
			}
			first[string(w.repeat.GetUID())] = w
			w.repeats = 1
			folds = append(folds, i)
		case w != nil && (w.decided.Skipped || w.foldsEvents()):
			// Unchanged, or a new Event: an event is no change of the cluster's state.
		case r.Status == StatusValid || r.Status == StatusNotRun:
			idle = false // the plan writes this entry
		}
	}
	if idle {
		for _, i := range folds {
			skip(i)
		}
	}
}

// skipRepeat decides that the repeat of an Event, entry i, is not written.
func skipRepeat(results []EntryResult, writers []*writer, i int) {
	w := writers[i]
	w.decided = Result{Change: ChangeNone, Skipped: true, Object: w.repeat, Live: w.repeat}
	results[i].Change, results[i].Object, results[i].Live = ChangeNone, w.repeat, w.repeat
}

// countAt reads an Event's count field (an integer JSON decoding left as int64, YAML as
// float64); 0 when absent.
func countAt(obj map[string]any, path ...string) int64 {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, path...)
	n, _ := number(v)
	return int64(n)
}
