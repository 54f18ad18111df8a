package main

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/apply"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/namespaces"
)

// liveEntry is what the live dry-run of `topolayer plan` says of one apply entry.
type liveEntry struct {
	Index   int    `json:"index"`
	Source  string `json:"source"`
	Action  string `json:"action"`
	Cluster string `json:"cluster"`
	Target  string `json:"target"`
	// Result is create, change, unchanged, delete, fail, or valid (the server accepts the
	// entry but cannot say what it would store before an earlier entry is written).
	Result string `json:"result"`
	Reason string `json:"reason,omitempty"`
	// Hint says how to resolve a common failure (a missing namespace or CRD, fields owned by
	// another field manager).
	Hint string `json:"hint,omitempty"`
	// Diff is a unified diff of the live object and the object the server would store
	// (with --diff, for create, change and delete).
	Diff string `json:"diff,omitempty"`
}

// Live dry-run results besides the apply.Change values.
const (
	liveFail  = "fail"
	liveValid = "valid"
)

func liveEntries(plan *plans.Plan, results []apply.EntryResult, withDiff bool) ([]liveEntry, error) {
	out := make([]liveEntry, 0, len(results))
	for _, r := range results {
		l := liveEntry{Index: r.Index, Action: string(r.Action), Cluster: r.Cluster, Target: objectName(r.Identity)}
		if r.Index >= 0 && r.Index < len(plan.Entries) {
			l.Source = objectName(plan.Entries[r.Index].Source)
		}
		switch {
		case r.Status == apply.StatusFailed:
			l.Result = liveFail
			if r.Err != nil {
				l.Reason = r.Err.Error()
				l.Hint = liveHint(r.Err, r.Cluster, r.Identity)
			}
		case r.Status == apply.StatusValid && r.Change == "":
			l.Result, l.Reason = liveValid, "an earlier entry of the plan creates what it needs"
		case r.Status == apply.StatusValid:
			l.Result = string(r.Change)
		default:
			l.Result = string(r.Status)
		}
		if withDiff && r.Status == apply.StatusValid && r.Change != "" && r.Change != apply.ChangeNone {
			d, err := objectDiff(r.Cluster+":"+l.Target, r.Live, r.Object)
			if err != nil {
				return nil, err
			}
			l.Diff = d
		}
		out = append(out, l)
	}
	return out, nil
}

// printLive prints the plan and the live results: for table and wide, the plan's tables
// with each entry's live result, the counts, each failure once with a hint, then the
// diffs; for name, the plan's names; for json and yaml, one document {plan, live}.
func printLive(out, notes io.Writer, format string, view tableView, plan *plans.Plan, live []liveEntry) error {
	switch format {
	case "json", "yaml":
		doc := struct {
			Plan *plans.Plan `json:"plan"`
			Live []liveEntry `json:"live"`
		}{plan, live}
		if format == "yaml" {
			return printYAML(out, doc)
		}
		return printJSON(out, doc)
	case "name":
		return printPlanNames(out, plan)
	case "table", "wide":
	default:
		return fmt.Errorf("--output %s has no live results", format)
	}
	byIndex := make(map[int]liveEntry, len(live))
	for _, l := range live {
		byIndex[l.Index] = l
	}
	if err := view.print(out, notes, plan, byIndex); err != nil {
		return err
	}
	counts := map[string]int{}
	for _, l := range live {
		counts[l.Result]++
	}
	adopt := ""
	if n := counts[string(apply.ChangeAdopt)]; n > 0 {
		adopt = fmt.Sprintf(" %d adopt,", n)
	}
	valid := ""
	if n := counts[liveValid]; n > 0 {
		valid = fmt.Sprintf(", %d valid (an earlier entry of the plan creates what it needs, so the server cannot say more yet)", n)
	}
	fmt.Fprintf(notes, "\nlive dry-run: %d create, %d change,%s %d unchanged, %d delete, %d fail%s\n",
		counts[string(apply.ChangeCreate)], counts[string(apply.ChangeUpdate)], adopt, counts[string(apply.ChangeNone)],
		counts[string(apply.ChangeDelete)], counts[liveFail], valid)
	if n := counts[liveFail]; n > 0 {
		fmt.Fprintf(notes, "\nFAILED (%d): the live clusters refuse these entries; nothing is written\n", n)
		for _, l := range live {
			if l.Result != liveFail {
				continue
			}
			if err := writeFailure(notes, fmt.Sprintf("#%d %s %s:%s", l.Index, l.Action, l.Cluster, l.Target), "source: "+l.Source, l.Reason, l.Hint); err != nil {
				return err
			}
		}
	}
	for _, l := range live {
		if l.Diff != "" {
			fmt.Fprintf(out, "\n%s", l.Diff)
		}
	}
	return nil
}

// liveFailures is plan's error when the live dry-run refused entries: the output shows each
// one already, so it only counts them.
func liveFailures(live []liveEntry) error {
	n := 0
	for _, l := range live {
		if l.Result == liveFail {
			n++
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("the live dry-run failed: %d of %d entries would fail; nothing is written", n, len(live))
}

// liveHint says how to resolve the common failures of a write: a namespace or a resource
// the cluster does not have, and fields that another field manager owns. A refusal of an
// object without topolayer's marks (apply.ConflictError) says how to adopt it itself.
func liveHint(err error, cluster string, id contract.Identity) string {
	var status apierrors.APIStatus
	switch {
	case err == nil:
		return ""
	case meta.IsNoMatchError(err):
		hint := fmt.Sprintf("hint: the %s cluster does not serve %s: install its CustomResourceDefinition first", cluster, resourceType(id))
		if strings.HasSuffix(id.Group, namespaces.ShadowGroupSuffix) {
			hint += " (topolayer shadow-crds writes the shadow CRDs of a hosted control plane)"
		}
		return hint
	case apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces":
		return fmt.Sprintf("hint: namespace %s does not exist on the %s cluster: create it, or have the operator write the Namespace in the same output", status.Status().Details.Name, cluster)
	case apierrors.IsConflict(err) && errors.As(err, &status):
		var managers []string
		if d := status.Status().Details; d != nil {
			for _, c := range d.Causes {
				if c.Type != metav1.CauseTypeFieldManagerConflict {
					continue
				}
				rest, ok := strings.CutPrefix(c.Message, "conflict with ")
				if !ok {
					continue
				}
				if q, err := strconv.QuotedPrefix(rest); err == nil {
					if m, err := strconv.Unquote(q); err == nil && !slices.Contains(managers, m) {
						managers = append(managers, m)
					}
				}
			}
		}
		if len(managers) == 0 {
			return ""
		}
		flags := make([]string, len(managers))
		for i, m := range managers {
			flags[i] = "--adopt-from " + strconv.Quote(m)
		}
		return fmt.Sprintf("hint: field manager %s owns these fields: to move them to the operator, pass %s, or list the manager in operators[].adopt.fieldManagers of the configuration (topolayer run)",
			strings.Join(managers, ", "), strings.Join(flags, " "))
	}
	return ""
}

// objectYAML renders obj for a diff without the fields the server sets on every write
// (contract.ServerSetFields); nil is empty.
func objectYAML(obj *unstructured.Unstructured) (string, error) {
	if obj == nil {
		return "", nil
	}
	c := obj.DeepCopy()
	contract.StripServerFields(c.Object)
	out, err := yaml.Marshal(c.Object)
	if err != nil {
		return "", err
	}
	return string(out), nil
}

// objectDiff is the unified diff of live and would, named after the entry's target. The
// values of a Secret are masked (maskSecrets), as kubectl diff masks them.
func objectDiff(name string, live, would *unstructured.Unstructured) (string, error) {
	live, would = maskSecrets(live, would)
	a, err := objectYAML(live)
	if err != nil {
		return "", err
	}
	b, err := objectYAML(would)
	if err != nil {
		return "", err
	}
	return difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        difflib.SplitLines(a),
		B:        difflib.SplitLines(b),
		FromFile: "live/" + name,
		ToFile:   "planned/" + name,
		Context:  3,
	})
}
