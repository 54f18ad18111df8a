package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/mitchellh/go-wordwrap"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/cmd/internal/cli"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/declare"
	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/internal/translate/recovery"
	"github.com/topolayer/topolayer/routing"
)

// tableWidth is the width the human views keep to: every row of the default table and
// every warning line fits in it. Names are never cut (as in kubectl); the columns are
// chosen so that they fit, and only warnings are cut, with -o wide showing them whole.
const tableWidth = 160

// planPrinter writes a plan in one format, with the declarations proposed for its refused
// entries (nil: none). Tables write their rows to out and their notes (summary, warnings,
// failures, declarations) to notes; the other formats write only to out.
type planPrinter func(out, notes io.Writer, p *plans.Plan, d *declare.Declarations) error

// planDocument is plan's -o json, yaml and jsonpath: the plan's own fields, and the
// declarations proposed for its refused entries when there are any.
type planDocument struct {
	*plans.Plan
	// Declarations is the configuration snippet that would place what the plan refused, to
	// review before adding it (translate.Engine.Declarations).
	Declarations *declare.Declarations `json:"declarations,omitempty"`
}

// planFormats are the values of plan's -o.
var planFormats = []string{"table", "wide", "name", "json", "yaml", "dot", "jsonpath="}

func printerNames() string { return strings.Join(planFormats, "|") }

// jsonPathFormat is the prefix of -o jsonpath=TEMPLATE, kubectl's.
const jsonPathFormat = "jsonpath="

// newJSONPath parses the template of -o jsonpath=TEMPLATE, as kubectl does: a template
// without braces is one expression ("jsonpath=.summary" is "{.summary}").
func newJSONPath(format string) (*jsonpath.JSONPath, error) {
	tmpl := strings.TrimPrefix(format, jsonPathFormat)
	if tmpl == "" {
		return nil, cli.UsageErrorf("--output %q: jsonpath= needs a template, such as jsonpath={.summary}", format)
	}
	if !strings.Contains(tmpl, "{") {
		tmpl = "{" + tmpl + "}"
	}
	jp := jsonpath.New("output").AllowMissingKeys(false)
	if err := jp.Parse(tmpl); err != nil {
		return nil, cli.UsageErrorf("--output %q: %v", format, err)
	}
	return jp, nil
}

// printJSONPath writes the template's values of v's JSON form (so that the JSON tags name
// the fields), as kubectl's -o jsonpath does.
func printJSONPath(w io.Writer, jp *jsonpath.JSONPath, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var data any
	if err := json.Unmarshal(js, &data); err != nil {
		return err
	}
	if err := jp.Execute(w, data); err != nil {
		return fmt.Errorf("--output jsonpath: %w", err)
	}
	return nil
}

// newPlanPrinter returns the printer of a format; noHeaders leaves out the tables' headers,
// noHints the hints of their rejected entries.
func newPlanPrinter(format string, noHeaders, noHints bool) (planPrinter, error) {
	switch format {
	case "table", "wide":
		v := tableView{Wide: format == "wide", NoHeaders: noHeaders, NoHints: noHints}
		return func(out, notes io.Writer, p *plans.Plan, d *declare.Declarations) error {
			if err := v.print(out, notes, p, nil); err != nil {
				return err
			}
			return writeDeclarations(notes, p, d)
		}, nil
	case "name":
		return func(out, _ io.Writer, p *plans.Plan, _ *declare.Declarations) error {
			return printPlanNames(out, p)
		}, nil
	case "json":
		return func(out, _ io.Writer, p *plans.Plan, d *declare.Declarations) error {
			return printJSON(out, planDocument{p, d})
		}, nil
	case "yaml":
		return func(out, _ io.Writer, p *plans.Plan, d *declare.Declarations) error {
			return printYAML(out, planDocument{p, d})
		}, nil
	case "dot":
		return func(out, _ io.Writer, p *plans.Plan, _ *declare.Declarations) error {
			return printPlanDot(out, p)
		}, nil
	}
	if strings.HasPrefix(format, jsonPathFormat) {
		jp, err := newJSONPath(format)
		if err != nil {
			return nil, err
		}
		return func(out, _ io.Writer, p *plans.Plan, d *declare.Declarations) error {
			return printJSONPath(out, jp, planDocument{p, d})
		}, nil
	}
	return nil, cli.UsageErrorf("--output %q: must be one of %s", format, printerNames())
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printYAML writes v as YAML, through its JSON form (so that the JSON tags name the fields).
func printYAML(w io.Writer, v any) error {
	js, err := json.Marshal(v)
	if err != nil {
		return err
	}
	out, err := yaml.JSONToYAML(js)
	if err != nil {
		return err
	}
	_, err = w.Write(out)
	return err
}

// printData writes v as -o json or -o yaml asks, and reports false for any other format: the
// command's own view, which the caller prints.
func printData(w io.Writer, format string, v any) (bool, error) {
	switch format {
	case "json":
		return true, printJSON(w, v)
	case "yaml":
		return true, printYAML(w, v)
	}
	return false, nil
}

// printPlanNames writes, as kubectl's -o name does, resource.group/name of every object the
// plan writes (disposition apply), once each, in plan order. Where that alone is ambiguous,
// a prefix says where the object is: "-n NAMESPACE " when the plan writes namespaced objects
// in more than one namespace (kubectl's flag, so that a line is the arguments of kubectl
// get), and "CLUSTER: " when it writes to more than one cluster (hosted).
func printPlanNames(w io.Writer, p *plans.Plan) error {
	type name struct{ cluster, namespace, typed string }
	var names []name
	seen := map[name]bool{}
	clusters, namespaces := map[string]bool{}, map[string]bool{}
	for _, e := range p.Entries {
		if e.Disposition != routing.Apply {
			continue
		}
		n := name{e.Target.Cluster, e.Target.Namespace, typedName(e.Target.Identity)}
		if seen[n] {
			continue
		}
		seen[n] = true
		names = append(names, n)
		clusters[n.cluster] = true
		if n.namespace != "" {
			namespaces[n.namespace] = true
		}
	}
	for _, n := range names {
		line := n.typed
		if n.namespace != "" && len(namespaces) > 1 {
			line = "-n " + n.namespace + " " + line
		}
		if len(clusters) > 1 {
			line = n.cluster + ": " + line
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

// tableView prints a plan for a person: one table in plan order when it fits in tableWidth,
// else, as kubectl get prints several kinds, one table per resource, so that the widest
// names (an event's) widen only their own table. Each row names its object as
// resource.group/name, never cut. The first column is the entry's index in the plan (its
// index in -o json), which warnings and failures refer to.
type tableView struct {
	// Wide adds the class, action, source and transforms of each entry, and shows warnings
	// whole.
	Wide bool
	// NoHeaders leaves out the headers and the blank lines between tables.
	NoHeaders bool
	// NoHints leaves out the hint of each rejected entry.
	NoHints bool
}

// print writes the tables to out, then the summary, the warnings and the failures to
// notes. live, when not nil, adds the live dry-run's result of each entry it has.
func (v tableView) print(out, notes io.Writer, p *plans.Plan, live map[int]liveEntry) error {
	if err := v.writeTables(out, p, live); err != nil {
		return err
	}
	s := p.Summary
	if _, err := fmt.Fprintf(notes, "\n%s topology: %d mutations: %d apply, %d absorbed, %d dropped, %d rejected\n",
		p.Topology, len(p.Entries), s.Apply, s.Absorbed, s.Dropped, s.Rejected); err != nil {
		return err
	}
	if err := v.writeWarnings(notes, p); err != nil {
		return err
	}
	return writeRejected(notes, p, v.NoHints)
}

// shown is the cluster and identity a row shows for an entry: its target, or its source
// when it lands nowhere.
func shown(e plans.Entry) (string, contract.Identity) {
	if e.Target.Cluster == "" {
		return "-", e.Source
	}
	return e.Target.Cluster, e.Target.Identity
}

func (v tableView) writeTables(w io.Writer, p *plans.Plan, live map[int]liveEntry) error {
	header := []string{"#", "CLUSTER", "NAMESPACE", "NAME", "DISPOSITION", "RULE"}
	if live != nil {
		header = append(header, "LIVE")
	}
	if v.Wide {
		header = append(header, "CLASS", "ACTION", "SOURCE", "TRANSFORMS")
	}
	rows := make([][]string, len(p.Entries))
	for i, e := range p.Entries {
		cluster, id := shown(e)
		row := []string{fmt.Sprint(i), cluster, dash(id.Namespace), typedName(id), string(e.Disposition), rule(e)}
		if live != nil {
			row = append(row, dash(live[i].Result))
		}
		if v.Wide {
			row = append(row, string(e.Class), string(e.Action), objectName(e.Source), dash(strings.Join(e.Transforms, ",")))
		}
		rows[i] = row
	}
	// One table in plan order when it fits (and always with -o wide); else one per
	// resource, so that the widest names widen only their own.
	groups := [][]int{make([]int, len(rows))}
	for i := range rows {
		groups[0][i] = i
	}
	if !v.Wide && tableLineWidth(header, rows) > tableWidth {
		groups = nil
		index := map[string]int{}
		for i, e := range p.Entries {
			_, id := shown(e)
			r := resourceType(id)
			g, ok := index[r]
			if !ok {
				g = len(groups)
				index[r] = g
				groups = append(groups, nil)
			}
			groups[g] = append(groups[g], i)
		}
	}
	for n, g := range groups {
		if n > 0 && !v.NoHeaders {
			fmt.Fprintln(w)
		}
		tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
		if !v.NoHeaders {
			fmt.Fprintln(tw, strings.Join(header, "\t"))
		}
		for _, i := range g {
			fmt.Fprintln(tw, strings.Join(rows[i], "\t"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	return nil
}

// tableLineWidth is the width of the widest line of one table of rows under header, as
// tabwriter aligns them (two spaces between columns).
func tableLineWidth(header []string, rows [][]string) int {
	widths := make([]int, len(header))
	for _, r := range append([][]string{header}, rows...) {
		for c, cell := range r {
			widths[c] = max(widths[c], utf8.RuneCountInString(cell))
		}
	}
	total := 2 * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	return total
}

// rule is the rule of an entry, marked when the configuration's supplement declared it, and
// when the operator did not record it (a Delete recovered from a controller's error, placed).
func rule(e plans.Entry) string {
	r := e.Rule
	if e.DeclaredBy != "" {
		r += " (declared by " + e.DeclaredBy + ")"
	}
	if e.Provenance != "" && e.Rule != recovery.Rule {
		r += " (" + recovery.Rule + ")"
	}
	return r
}

// warning is one warning of one entry, split for grouping.
type warning struct {
	entry int
	// label is what the message starts with ("dangling reference", a rule's name), "" when
	// it starts with no label; tail is its last clause (after "; "), the consequence that
	// warnings of one kind share; detail is the rest.
	label, detail, tail string
}

// splitWarning splits a warning message into its label, detail and tail.
func splitWarning(msg string) (label, detail, tail string) {
	detail = msg
	if i := strings.Index(msg, ": "); i > 0 && i <= 40 && !strings.ContainsAny(msg[:i], ",;") {
		label, detail = msg[:i], msg[i+2:]
	}
	if i := strings.LastIndex(detail, "; "); i > 0 {
		detail, tail = detail[:i], detail[i+2:]
	}
	return label, detail, tail
}

// writeWarnings writes the plan's warnings grouped by kind with a count, one line each.
// Warnings of one label that share their consequence have it said once in their group's
// heading. Lines are cut to tableWidth unless Wide.
func (v tableView) writeWarnings(w io.Writer, p *plans.Plan) error {
	var all []warning
	shared := map[[2]string]int{}
	for i, e := range p.Entries {
		for _, msg := range e.Warnings {
			l, d, t := splitWarning(msg)
			all = append(all, warning{entry: i, label: l, detail: d, tail: t})
			shared[[2]string{l, t}]++
		}
	}
	if len(all) == 0 {
		return nil
	}
	type group struct {
		heading string
		lines   []string
	}
	var order []string
	groups := map[string]*group{}
	for _, wa := range all {
		heading, detail := wa.label, wa.detail
		if wa.tail != "" {
			if shared[[2]string{wa.label, wa.tail}] > 1 {
				heading = strings.TrimPrefix(heading+": "+wa.tail, ": ")
			} else {
				detail += "; " + wa.tail
			}
		}
		if heading == "" {
			heading = "other"
		}
		g, ok := groups[heading]
		if !ok {
			g = &group{heading: heading}
			groups[heading] = g
			order = append(order, heading)
		}
		e := p.Entries[wa.entry]
		g.lines = append(g.lines, v.fit(fmt.Sprintf("  #%d %s/%s: %s", wa.entry, e.Source.Resource, sourceName(e.Source), detail)))
	}
	intro := fmt.Sprintf("\nWARNINGS (%d)", len(all))
	if !v.Wide {
		intro += ": one line each, -o wide shows them whole"
	}
	if _, err := fmt.Fprintln(w, intro); err != nil {
		return err
	}
	for _, h := range order {
		g := groups[h]
		if _, err := fmt.Fprintln(w, v.fit(fmt.Sprintf("%s (%d)", g.heading, len(g.lines)))); err != nil {
			return err
		}
		for _, l := range g.lines {
			if _, err := fmt.Fprintln(w, l); err != nil {
				return err
			}
		}
	}
	return nil
}

// fit cuts a line to tableWidth, marking the cut, unless the view is wide.
func (v tableView) fit(line string) string {
	if v.Wide || utf8.RuneCountInString(line) <= tableWidth {
		return line
	}
	r := []rune(line)
	return string(r[:tableWidth-1]) + "…"
}

// writeRejected writes every rejected entry once: the entry, why, and what to do (unless
// noHints).
func writeRejected(w io.Writer, p *plans.Plan, noHints bool) error {
	rejected := 0
	for _, e := range p.Entries {
		if e.Disposition == routing.Rejected {
			rejected++
		}
	}
	if rejected == 0 {
		return nil
	}
	if _, err := fmt.Fprintf(w, "\nREJECTED (%d): nothing of the plan is written\n", rejected); err != nil {
		return err
	}
	for i, e := range p.Entries {
		if e.Disposition != routing.Rejected {
			continue
		}
		file := ""
		if e.SourcePath != "" {
			file = "file: " + e.SourcePath
		}
		hint := rejectionHint(e)
		if noHints {
			hint = ""
		}
		if err := writeFailure(w, fmt.Sprintf("#%d %s %s %s (%s)", i, e.Class, e.Action, objectName(e.Source), e.Rule),
			file, e.Reason, hint); err != nil {
			return err
		}
	}
	return nil
}

// writeFailure writes one failure: its heading line, then each paragraph (where, why, what
// to do) wrapped to the table's width and indented.
func writeFailure(w io.Writer, heading string, paragraphs ...string) error {
	var b strings.Builder
	b.WriteString(heading + "\n")
	for _, text := range paragraphs {
		if text == "" {
			continue
		}
		for _, l := range strings.Split(wordwrap.WrapString(oneLine(text), tableWidth-2), "\n") {
			b.WriteString("  " + l + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rejectionHint says how to resolve the common rejections.
func rejectionHint(e plans.Entry) string {
	if e.Rule == plans.RuleDeclaredOutputs {
		return "hint: declare it in the operator's output-resources (for its class " + string(e.Class) +
			"), or in the configuration's supplements when the operator cannot be changed"
	}
	return ""
}

// rejectedSummary is plan's error for a plan with rejected entries: the table and the
// structured outputs show each entry already, so it only counts them.
func rejectedSummary(p *plans.Plan) error {
	if n := len(p.Rejected()); n > 0 {
		return fmt.Errorf("%d of %d mutations rejected; nothing is written", n, len(p.Entries))
	}
	return nil
}

// resourceType is kubectl's resource.group of an identity (the resource alone in the core
// group): the TYPE in `kubectl get TYPE/NAME`.
func resourceType(id contract.Identity) string {
	if id.Group == "" {
		return id.Resource
	}
	return id.Resource + "." + id.Group
}

// sourceName is an identity's name, or its generateName followed by "*".
func sourceName(id contract.Identity) string {
	if id.Name == "" {
		return id.GenerateName + "*"
	}
	return id.Name
}

// typedName is resource.group/name, kubectl's TYPE/NAME.
func typedName(id contract.Identity) string {
	return resourceType(id) + "/" + sourceName(id)
}

// objectName prints an identity as kubectl does: resource.group/[ns/]name.
func objectName(id contract.Identity) string {
	if id.Namespace != "" {
		return resourceType(id) + "/" + id.Namespace + "/" + sourceName(id)
	}
	return typedName(id)
}
