package determinism

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/topolayer/topolayer/contract"
)

// Pseudo controllers: what belongs to no controller instance name.
const (
	// EventsController holds the events, which carry no controller instance name.
	EventsController = "(events)"
	// ExitCodeController holds the operator's exit code.
	ExitCodeController = "(exit code)"
)

// IsPseudo reports whether a controller name is one of the pseudo controllers
// (EventsController, ExitCodeController) rather than a controller instance name.
func IsPseudo(name string) bool { return name == EventsController || name == ExitCodeController }

// controllerResultsObject names a controller's entry in controller-results.yaml in a report.
const controllerResultsObject = "controller-results.yaml"

// Run is what one apply-configuration run produced.
type Run struct {
	// Output is the run's output directory as contract.ReadOutputDir reads it.
	Output *contract.OutputDir
	// ExitCode is the operator's exit code.
	ExitCode int
}

// Report is the comparison of several runs of one operator on the same inputs.
type Report struct {
	// Runs is the number of runs compared.
	Runs int `json:"runs"`
	// Checked are the names of the controllers seen in any run (in controller-results.yaml
	// or as a controller instance name), sorted; pseudo controllers are not among them.
	Checked []string `json:"checked"`
	// Nondeterministic are the controllers, pseudo controllers included, whose outputs differ
	// between runs, sorted by name.
	Nondeterministic []Controller `json:"nondeterministic"`
}

// Deterministic reports whether every controller wrote the same in every run.
func (r *Report) Deterministic() bool { return len(r.Nondeterministic) == 0 }

// Controller is one controller whose outputs differ between runs.
type Controller struct {
	// Name is the controller instance name, or a pseudo controller (EventsController,
	// ExitCodeController).
	Name string `json:"name"`
	// RunsDiffering is the number of runs in which the controller's outputs, taken together,
	// differ from its most common outputs (on a tie, those of the earliest run).
	RunsDiffering int `json:"runsDiffering"`
	// Objects are the objects that differ, sorted by class, action and object.
	Objects []Object `json:"objects"`
}

// Object is one object (or controller-results.yaml entry, or exit code) that differs between
// runs.
type Object struct {
	// Class and Action are the mutation's class folder and action; empty for
	// controller-results.yaml and the exit code.
	Class  contract.Class  `json:"class,omitempty"`
	Action contract.Action `json:"action,omitempty"`
	// Object names what was written: `resource.group ns/name`, an event's involved object
	// and reason, "controller-results.yaml" or "exit code".
	Object string `json:"object"`
	// WrittenIn and NotWrittenIn are the runs (numbered from 1) in which the controller wrote
	// the object and those in which it did not.
	WrittenIn    []int `json:"writtenIn"`
	NotWrittenIn []int `json:"notWrittenIn,omitempty"`
	// Variants is the number of different outputs among the runs that wrote the object.
	Variants int `json:"variants"`
	// Difference says how the runs differ, for a person.
	Difference string `json:"difference"`
}

// objectKey groups mutations: one controller, one class, one action, one object.
type objectKey struct {
	controller string
	class      contract.Class
	action     contract.Action
	object     string // the identity with its version, or an event's key
}

// observed is what one object looked like in each run: "" where it was not written.
type observed struct {
	label string
	// readable is set when the values are short text worth showing (results, exit codes),
	// rather than digests.
	readable bool
	perRun   [][]string
}

// Compare compares the runs of one operator on the same inputs and --now. It reads nothing
// from disk and keeps no reference to the runs.
func Compare(runs []Run) *Report {
	n := len(runs)
	objs := map[objectKey]*observed{}
	add := func(k objectKey, label string, readable bool, run int, value string) {
		o := objs[k]
		if o == nil {
			o = &observed{label: label, readable: readable, perRun: make([][]string, n)}
			objs[k] = o
		}
		o.perRun[run] = append(o.perRun[run], value)
	}
	controllers := map[string]bool{ExitCodeController: true}
	for i, r := range runs {
		add(objectKey{controller: ExitCodeController, object: "exit code"}, "exit code", true, i, strconv.Itoa(r.ExitCode))
		if r.Output == nil {
			continue
		}
		if res := r.Output.ControllerResults; res != nil {
			for _, c := range res.ControllerResults {
				controllers[c.ControllerName] = true
				add(objectKey{controller: c.ControllerName, object: controllerResultsObject}, controllerResultsObject, true, i, resultValue(c))
			}
		}
		for j := range r.Output.Mutations {
			m := &r.Output.Mutations[j]
			id := m.Identity()
			if id.IsEvent() {
				key, label := eventKey(m)
				controllers[EventsController] = true
				add(objectKey{controller: EventsController, class: m.Class, action: m.Metadata.Action, object: key}, label, false, i, "written")
				continue
			}
			c := m.Metadata.ControllerInstanceName
			controllers[c] = true
			add(objectKey{controller: c, class: m.Class, action: m.Metadata.Action, object: id.String() + " " + id.Version},
				id.String(), false, i, mutationDigest(m))
		}
	}

	names := slices.Sorted(maps.Keys(controllers))
	report := &Report{Runs: n, Nondeterministic: []Controller{}}
	for _, name := range names {
		if !IsPseudo(name) {
			report.Checked = append(report.Checked, name)
		}
	}
	byController := map[string][]objectKey{}
	for k := range objs {
		byController[k.controller] = append(byController[k.controller], k)
	}
	for _, name := range names {
		keys := byController[name]
		slices.SortFunc(keys, func(a, b objectKey) int {
			return cmp.Or(cmp.Compare(a.class, b.class), cmp.Compare(a.action, b.action), cmp.Compare(a.object, b.object))
		})
		ctrl := Controller{Name: name}
		runPrints := make([]strings.Builder, n)
		for _, k := range keys {
			o := objs[k]
			values := make([]string, n)
			for i, vs := range o.perRun {
				slices.Sort(vs)
				values[i] = strings.Join(vs, "\n")
				fmt.Fprintf(&runPrints[i], "%s|%s|%s=%s\n", k.class, k.action, k.object, values[i])
			}
			if obj, differs := compareObject(k, o, values); differs {
				ctrl.Objects = append(ctrl.Objects, obj)
			}
		}
		if len(ctrl.Objects) == 0 {
			continue
		}
		prints := make([]string, n)
		for i := range runPrints {
			prints[i] = runPrints[i].String()
		}
		ctrl.RunsDiffering = n - count(prints, mostCommon(prints))
		report.Nondeterministic = append(report.Nondeterministic, ctrl)
	}
	return report
}

// compareObject describes how one object's values (one per run, "" where not written)
// differ; differs is false when every run has the same.
func compareObject(k objectKey, o *observed, values []string) (obj Object, differs bool) {
	obj = Object{Class: k.class, Action: k.action, Object: o.label}
	distinct := map[string]int{}
	for i, v := range values {
		if v == "" {
			obj.NotWrittenIn = append(obj.NotWrittenIn, i+1)
			continue
		}
		obj.WrittenIn = append(obj.WrittenIn, i+1)
		distinct[v]++
	}
	obj.Variants = len(distinct)
	if len(obj.NotWrittenIn) == 0 && obj.Variants <= 1 {
		return obj, false
	}
	n, written := len(values), len(obj.WrittenIn)
	var parts []string
	switch {
	case o.readable:
		for _, v := range orderOfFirstUse(values) {
			shown := "(absent)"
			if v != "" {
				shown = shorten(v)
			}
			parts = append(parts, fmt.Sprintf("%s in %d", shown, count(values, v)))
		}
		obj.Difference = strings.Join(parts, ", ") + fmt.Sprintf(" of %d runs", n)
		return obj, true
	case written < n:
		parts = append(parts, fmt.Sprintf("written in %d of %d runs", written, n))
		if obj.Variants > 1 {
			parts = append(parts, fmt.Sprintf("%d different bodies", obj.Variants))
		}
	case obj.Variants == n:
		parts = append(parts, fmt.Sprintf("a different body in each of %d runs", n))
	default:
		parts = append(parts, fmt.Sprintf("%d different bodies in %d runs", obj.Variants, n))
	}
	obj.Difference = strings.Join(parts, ", ")
	return obj, true
}

// resultValue is a controller's controller-results.yaml entry, without its panic stack (which
// holds addresses that vary from run to run).
func resultValue(c contract.ControllerResult) string {
	v := string(c.Status)
	for _, e := range c.Errors {
		v += ": " + e.Message
	}
	return v
}

// mutationDigest fingerprints what a mutation asks for besides its identity.
func mutationDigest(m *contract.Mutation) string {
	h := sha256.New()
	for _, part := range [][]byte{[]byte(m.Metadata.FieldManager), []byte(m.Metadata.PatchType), m.Body, m.Options} {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// eventKey keys an event by its involved object, reason and message (or, for events.k8s.io,
// regarding and note): its name carries a random suffix. label is shorter, for a person.
func eventKey(m *contract.Mutation) (key, label string) {
	if m.Object == nil {
		// Events are created; an event patch or delete is keyed by its name.
		return m.Identity().String(), m.Identity().String()
	}
	o := m.Object.Object
	involved := stringAt(o, "involvedObject")
	if involved == "" {
		involved = stringAt(o, "regarding")
	}
	reason := stringAt(o, "reason")
	message := stringAt(o, "message") + stringAt(o, "note")
	label = fmt.Sprintf("event %s %s", reason, involved)
	return label + ": " + message, label
}

// stringAt formats a field of an object: a string as it is, an object reference as
// `Kind ns/name`.
func stringAt(o map[string]any, field string) string {
	switch v := o[field].(type) {
	case string:
		return v
	case map[string]any:
		s, _ := v["kind"].(string)
		ns, _ := v["namespace"].(string)
		name, _ := v["name"].(string)
		if ns != "" {
			name = ns + "/" + name
		}
		return s + " " + name
	}
	return ""
}

// shorten keeps the first line of a value, at most 60 characters of it.
func shorten(v string) string {
	v, _, cut := strings.Cut(v, "\n")
	if len(v) > 60 {
		v, cut = v[:57], true
	}
	if cut {
		v += "..."
	}
	return strconv.Quote(v)
}

// mostCommon is the value that occurs most often; on a tie, the earliest.
func mostCommon(values []string) string {
	best, bestN := "", 0
	for _, v := range values {
		if c := count(values, v); c > bestN {
			best, bestN = v, c
		}
	}
	return best
}

// orderOfFirstUse lists the distinct values in the order they first occur.
func orderOfFirstUse(values []string) []string {
	var out []string
	for _, v := range values {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// count is the number of times v occurs in values.
func count(values []string, v string) int {
	c := 0
	for _, x := range values {
		if x == v {
			c++
		}
	}
	return c
}
