package harness

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/topolayer/topolayer/contract"
)

// Compare compares an expected and an actual output directory the way the upstream harness
// does (see the package documentation) and returns every difference as a readable message;
// none means the directories are equivalent. A directory the upstream reader refuses is a
// difference.
func Compare(expectedDir, actualDir string) []string {
	expected, err := readUpstream(expectedDir)
	if err != nil {
		return []string{"cannot read the expected output:\n" + indent(err.Error())}
	}
	actual, err := readUpstream(actualDir)
	if err != nil {
		return []string{"cannot read the actual output:\n" + indent(err.Error())}
	}
	return compareUpstream(expected, actual)
}

// strictWarnings says why topolayer's own reader, the one `topolayer run` uses, refuses an
// output directory that the upstream harness accepts; nil when it does not.
func strictWarnings(side, dir string) []string {
	if _, err := contract.ReadOutputDir(dir, contract.ReadOptions{}); err != nil {
		return []string{fmt.Sprintf("the %s output passes the upstream comparison, but `topolayer run` would refuse it: %v", side, err)}
	}
	return nil
}

// CompareOutputs compares two output directories read by topolayer's own reader, stricter
// than the upstream one that Compare uses:
//   - a mutation under Unspecified, on either side, is a difference (the upstream reader
//     rejects the folder, so such a test never passes);
//   - controller-results.yaml must be equal, entries in order;
//   - for each class, ignoring events, the two sets of mutations must be equal. Two
//     mutations are equal when their action, patch type, field manager, controller instance
//     name, group, version, resource, namespace, name, generate name, body bytes and options
//     bytes are. File names, prefixes, order and duplicates do not matter.
//
// A mutation missing on one side and one in excess on the other with the same class, action
// and object are reported together, with a unified diff of what differs.
func CompareOutputs(expected, actual *contract.OutputDir) []string {
	var diffs []string
	for _, side := range []struct {
		name string
		out  *contract.OutputDir
	}{{"expected", expected}, {"actual", actual}} {
		for _, m := range side.out.Mutations {
			if m.Class == contract.ClassUnspecified {
				diffs = append(diffs, fmt.Sprintf("%s output: undeclared write (Unspecified): %s %s by %q (%s)",
					side.name, m.Metadata.Action, m.Identity(), m.Metadata.ControllerInstanceName, m.Path))
			}
		}
	}
	if d := diffControllerResults(expected, actual); d != "" {
		diffs = append(diffs, d)
	}
	for _, class := range contract.Classes()[:3] {
		diffs = append(diffs, diffClass(class, expected.Mutations, actual.Mutations)...)
	}
	return diffs
}

func diffControllerResults(expected, actual *contract.OutputDir) string {
	switch {
	case expected.HasControllerResults && !actual.HasControllerResults:
		return contract.ControllerResultsFile + " is missing from the actual output"
	case !expected.HasControllerResults && actual.HasControllerResults:
		return contract.ControllerResultsFile + " is missing from the expected output"
	}
	e, _ := contract.MarshalControllerResults(expected.ControllerResults)
	a, _ := contract.MarshalControllerResults(actual.ControllerResults)
	if bytes.Equal(e, a) {
		return ""
	}
	return contract.ControllerResultsFile + " differs:\n" + indent(unifiedDiff(e, a))
}

// record is the part of a mutation the comparison looks at.
type record struct {
	identity string // class, action and object: what pairs a missing record with an excess one
	key      string // everything compared
	m        contract.Mutation
}

func newRecord(m contract.Mutation) record {
	md := m.Metadata
	identity := fmt.Sprintf("%s %s %s", m.Class, md.Action, m.Identity())
	key := strings.Join([]string{
		identity, md.ResourceType.Version, md.PatchType, md.FieldManager, md.ControllerInstanceName,
		string(m.Body), string(m.Options), fmt.Sprint(m.Options == nil),
	}, "\x00")
	return record{identity: identity, key: key, m: m}
}

// diffClass compares the non-event mutations of one class as sets.
func diffClass(class contract.Class, expected, actual []contract.Mutation) []string {
	collect := func(ms []contract.Mutation) map[string]record {
		set := map[string]record{}
		for _, m := range ms {
			if m.Class == class && !m.Identity().IsEvent() {
				r := newRecord(m)
				set[r.key] = r
			}
		}
		return set
	}
	return setDiff[record]{
		order:   func(a, b record) int { return cmp.Or(cmp.Compare(a.identity, b.identity), cmp.Compare(a.key, b.key)) },
		same:    func(e, a record) bool { return a.identity == e.identity },
		missing: func(e record) string { return fmt.Sprintf("missing: %s (expected %s)", e.identity, e.m.Path) },
		differs: func(e, a record) string {
			return fmt.Sprintf("differs: %s (expected %s, actual %s):\n%s", e.identity, e.m.Path, a.m.Path, indent(describe(e.m, a.m)))
		},
		unexpected: func(a record) string {
			return fmt.Sprintf("unexpected: %s (actual %s):\n%s", a.identity, a.m.Path, indent(string(a.m.Body)))
		},
	}.diff(collect(expected), collect(actual))
}

// describe says how two mutations of the same object differ: metadata fields, then
// unified diffs of the body and options.
func describe(e, a contract.Mutation) string {
	var b strings.Builder
	field := func(name, ev, av string) {
		if ev != av {
			fmt.Fprintf(&b, "%s: expected %q, actual %q\n", name, ev, av)
		}
	}
	field("resourceType.Version", e.Metadata.ResourceType.Version, a.Metadata.ResourceType.Version)
	field("patchType", e.Metadata.PatchType, a.Metadata.PatchType)
	field("fieldManager", e.Metadata.FieldManager, a.Metadata.FieldManager)
	field("controllerInstanceName", e.Metadata.ControllerInstanceName, a.Metadata.ControllerInstanceName)
	if !bytes.Equal(e.Body, a.Body) {
		b.WriteString("body:\n" + unifiedDiff(e.Body, a.Body))
	}
	if !bytes.Equal(e.Options, a.Options) || (e.Options == nil) != (a.Options == nil) {
		b.WriteString("options:\n" + unifiedDiff(e.Options, a.Options))
	}
	return strings.TrimRight(b.String(), "\n")
}

// unifiedDiff returns a unified diff of two files' bytes, expected first.
func unifiedDiff(expected, actual []byte) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: splitLines(expected), FromFile: "expected",
		B: splitLines(actual), ToFile: "actual",
		Context: 3,
	})
	if err != nil || d == "" {
		return fmt.Sprintf("expected %q\nactual   %q\n", expected, actual)
	}
	return d
}

// splitLines splits a file into lines that each end in a newline; a last line without one
// is marked, so that a missing final newline shows in the diff.
func splitLines(data []byte) []string {
	if len(data) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(data), "\n")
	if last := lines[len(lines)-1]; last == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] = last + "\n\\ no newline at end of file\n"
	}
	return lines
}

// indent indents every line of s by four spaces.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// setDiff compares two sets of requests, keyed by everything compared. What expected
// holds that actual lacks is missing, what actual holds beyond expected unexpected; a
// missing request and the first unexpected one that is the same object (same) pair up as
// one that differs. With both sides sorted by order, diff says, in the words of missing,
// differs and unexpected, what is missing or differs, then what is left unexpected.
type setDiff[V any] struct {
	order      func(a, b V) int
	same       func(e, a V) bool
	missing    func(e V) string
	differs    func(e, a V) string
	unexpected func(a V) string
}

func (d setDiff[V]) diff(expected, actual map[string]V) []string {
	var missing, excess []V
	for k, v := range expected {
		if _, ok := actual[k]; !ok {
			missing = append(missing, v)
		}
	}
	for k, v := range actual {
		if _, ok := expected[k]; !ok {
			excess = append(excess, v)
		}
	}
	slices.SortFunc(missing, d.order)
	slices.SortFunc(excess, d.order)
	var diffs []string
	for _, e := range missing {
		i := slices.IndexFunc(excess, func(a V) bool { return d.same(e, a) })
		if i < 0 {
			diffs = append(diffs, d.missing(e))
			continue
		}
		a := excess[i]
		excess = slices.Delete(excess, i, i+1)
		diffs = append(diffs, d.differs(e, a))
	}
	for _, a := range excess {
		diffs = append(diffs, d.unexpected(a))
	}
	return diffs
}
