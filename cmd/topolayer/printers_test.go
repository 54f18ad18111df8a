package main

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/corpus"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// caoHostedConfig is the hosted configuration written for the cluster-authentication-operator.
const caoHostedConfig = "../../examples/cluster-authentication-operator/hosted.yaml"

// TestPlanTableFitsCAO: the default table of every CAO corpus case, hosted and standalone,
// rows, warnings and failures alike, fits in tableWidth columns; every entry has a row,
// every warning a line, and every rejected entry is printed once.
func TestPlanTableFitsCAO(t *testing.T) {
	for _, c := range corpus.CAOCases(t) {
		for name, cfg := range map[string]string{"hosted": caoHostedConfig, "standalone": standaloneConfig} {
			t.Run(c.Name+"/"+name, func(t *testing.T) {
				args := []string{"plan", "--config", cfg, "--from", c.ExpectedOutput, "--operator", c.Operator}
				table, _, tableErr := run(t, args...)
				js, _, _ := run(t, append(args, "-o", "json")...)
				var plan plans.Plan
				if err := json.Unmarshal([]byte(js), &plan); err != nil {
					t.Fatalf("plan -o json: %v", err)
				}
				for i, l := range strings.Split(table, "\n") {
					if n := utf8.RuneCountInString(l); n > tableWidth {
						t.Errorf("line %d is %d columns wide, more than %d:\n%s", i+1, n, tableWidth, l)
					}
				}
				rows, warnings := 0, 0
				for _, l := range strings.Split(table, "\n") {
					if f := strings.Fields(l); len(f) > 0 && f[0] != "#" && isIndex(f[0]) {
						rows++
					}
					if strings.HasPrefix(l, "  #") && isIndex(strings.Fields(l)[0][1:]) {
						warnings++
					}
				}
				wantWarnings := 0
				for _, e := range plan.Entries {
					wantWarnings += len(e.Warnings)
				}
				if rows != len(plan.Entries) || warnings != wantWarnings {
					t.Errorf("%d rows and %d warning lines for %d entries and %d warnings:\n%s", rows, warnings, len(plan.Entries), wantWarnings, table)
				}
				if (plan.Summary.Rejected > 0) != (tableErr != nil) {
					t.Errorf("%d rejected, error %v", plan.Summary.Rejected, tableErr)
				}
				for _, e := range plan.Rejected() {
					if n := strings.Count(table, objectName(e.Source)+" ("+e.Rule+")"); n != 1 {
						t.Errorf("rejected %s is printed %d times, want once:\n%s", objectName(e.Source), n, table)
					}
				}
			})
		}
	}
}

// isIndex reports whether s is an entry's index, the first column of a table row.
func isIndex(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

func TestSplitWarning(t *testing.T) {
	tests := map[string]struct{ msg, label, detail, tail string }{
		"rule label and tail": {
			msg:   "hosted/selector-scope: spec.egress[0].to[0]: reaches namespace openshift-dns; left as it is, it names that cluster's namespace",
			label: "hosted/selector-scope", detail: "spec.egress[0].to[0]: reaches namespace openshift-dns", tail: "left as it is, it names that cluster's namespace",
		},
		"words label": {
			msg:   "dangling reference: secrets a/b is not in the plan; it is expected as secrets h/a--b",
			label: "dangling reference", detail: "secrets a/b is not in the plan", tail: "it is expected as secrets h/a--b",
		},
		"no label": {
			msg:    "refers to serviceaccounts a/b, which lands on the management cluster, not the guest cluster",
			detail: "refers to serviceaccounts a/b, which lands on the management cluster, not the guest cluster",
		},
		"a colon late in the message is not a label": {
			msg:    "refers to secrets a/b, which cannot be mapped: too long",
			detail: "refers to secrets a/b, which cannot be mapped: too long",
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			l, d, tail := splitWarning(tc.msg)
			if l != tc.label || d != tc.detail || tail != tc.tail {
				t.Errorf("splitWarning = %q, %q, %q; want %q, %q, %q", l, d, tail, tc.label, tc.detail, tc.tail)
			}
		})
	}
}

// TestPlanTableViews: the default table is narrow, wide adds the source columns and shows
// warnings whole, name lists each object written once, and --no-headers leaves the rows
// alone on stdout.
func TestPlanTableViews(t *testing.T) {
	src := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "openshift-a", Name: "c"}
	tgt := contract.Identity{Version: "v1", Resource: "configmaps", Namespace: "hcp", Name: "openshift-a--c"}
	long := "hosted/selector-scope: spec.x: " + strings.Repeat("far ", 60) + "; left as it is, it reaches out"
	plan := &plans.Plan{Topology: "hosted", Entries: []plans.Entry{
		{Class: contract.ClassManagement, Action: contract.ActionApply, Source: src, Target: plans.Target{Cluster: routing.ClusterManagement, Identity: tgt}, Disposition: routing.Apply, Rule: "hosted/management", Warnings: []string{long}},
		{Class: contract.ClassManagement, Action: contract.ActionApplyStatus, Source: src, Target: plans.Target{Cluster: routing.ClusterManagement, Identity: tgt}, Disposition: routing.Apply, Rule: "hosted/management", Warnings: []string{long}},
		{Class: contract.ClassUserWorkload, Action: contract.ActionCreate, Source: contract.Identity{Version: "v1", Resource: "namespaces", Name: "x"}, Disposition: routing.Rejected, Rule: plans.RuleDeclaredOutputs, Reason: "not in output-resources"},
	}, Summary: plans.Summary{Apply: 2, Rejected: 1}}
	print := func(format string, noHeaders bool) (string, string) {
		t.Helper()
		p, err := newPlanPrinter(format, noHeaders, false)
		if err != nil {
			t.Fatal(err)
		}
		var out, notes strings.Builder
		if err := p(&out, &notes, plan, nil); err != nil {
			t.Fatal(err)
		}
		return out.String(), notes.String()
	}
	out, notes := print("table", false)
	for _, want := range []string{"#  CLUSTER     NAMESPACE  NAME", "0  management  hcp        configmaps/openshift-a--c  apply        hosted/management",
		"2  -           -          namespaces/x               rejected     " + plans.RuleDeclaredOutputs} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SOURCE") || strings.Contains(out, "WARNINGS") {
		t.Errorf("the table shows the source columns, or its notes:\n%s", out)
	}
	for _, want := range []string{"WARNINGS (2)", "hosted/selector-scope: left as it is, it reaches out (2)", "  #0 configmaps/c: spec.x: far", "…",
		"REJECTED (1)", "#2 UserWorkload Create namespaces/x (" + plans.RuleDeclaredOutputs + ")", "not in output-resources", "hint: declare it in the operator's output-resources"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	wide, notes := print("wide", false)
	if !strings.Contains(wide, "CLASS") || !strings.Contains(wide, "configmaps/openshift-a/c") || !strings.Contains(notes, strings.Repeat("far ", 60)) {
		t.Errorf("wide:\n%s\n%s", wide, notes)
	}
	rows, notes := print("table", true)
	if strings.Contains(rows, "NAME") || strings.Contains(rows, "WARNINGS") || strings.Count(rows, "\n") != 3 || !strings.Contains(notes, "WARNINGS") {
		t.Errorf("--no-headers: rows:\n%s\nnotes:\n%s", rows, notes)
	}
	if names, _ := print("name", false); names != "configmaps/openshift-a--c\n" {
		t.Errorf("-o name = %q", names)
	}

	// A plan whose one table would pass tableWidth is split per resource, names whole.
	event := contract.Identity{Version: "v1", Resource: "events", Namespace: "hcp", Name: strings.Repeat("e", 90)}
	ns := contract.Identity{Version: "v1", Resource: "namespaces", Name: "hcp"}
	plan.Entries = append(plan.Entries,
		plans.Entry{Source: event, Target: plans.Target{Cluster: routing.ClusterManagement, Identity: event}, Disposition: routing.Apply, Rule: "hosted/management"},
		plans.Entry{Source: ns, Target: plans.Target{Cluster: routing.ClusterManagement, Identity: ns}, Disposition: routing.Absorbed, Rule: "hosted/absorb-namespaces/Management"})
	out, _ = print("table", false)
	if n := strings.Count(out, "NAMESPACE"); n != 3 || !strings.Contains(out, "events/"+event.Name) {
		t.Errorf("%d tables, want one per resource:\n%s", n, out)
	}
	for _, l := range strings.Split(out, "\n") {
		if utf8.RuneCountInString(l) > tableWidth {
			t.Errorf("line wider than %d: %s", tableWidth, l)
		}
	}
}
