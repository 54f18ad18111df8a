package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"sigs.k8s.io/yaml"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/translate"
)

// planPrinter writes a plan in one format.
type planPrinter func(io.Writer, *translate.Plan) error

var planPrinters = map[string]planPrinter{
	"table": printPlanTable,
	"json":  printPlanJSON,
	"yaml":  printPlanYAML,
	"dot":   printPlanDot,
}

func printerNames() string {
	names := make([]string, 0, len(planPrinters))
	for n := range planPrinters {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, "|")
}

func printPlanJSON(w io.Writer, p *translate.Plan) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(p)
}

func printPlanYAML(w io.Writer, p *translate.Plan) error {
	js, err := json.Marshal(p)
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

// printPlanTable prints one line per entry, kubectl style, then the summary.
func printPlanTable(w io.Writer, p *translate.Plan) error {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "CLASS\tACTION\tSOURCE\tCLUSTER\tTARGET\tDISPOSITION\tRULE")
	for _, e := range p.Entries {
		target := "-"
		if e.Target.Cluster != "" {
			target = objectName(e.Target.Identity)
			if e.Target.Identity == e.Source {
				target = "(unchanged)"
			}
		}
		cluster := e.Target.Cluster
		if cluster == "" {
			cluster = "-"
		}
		rule := e.Rule
		if e.DeclaredBy != "" {
			rule += " (declared by " + e.DeclaredBy + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Class, e.Action, objectName(e.Source), cluster, target, e.Disposition, rule)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	s := p.Summary
	if _, err := fmt.Fprintf(w, "\n%s topology: %d mutations: %d apply, %d absorbed, %d dropped, %d rejected\n",
		p.Topology, len(p.Entries), s.Apply, s.Absorbed, s.Dropped, s.Rejected); err != nil {
		return err
	}
	// Warnings (dangling references, selectors that reach outside their simulated namespace,
	// the plan-level check) are shown here too, not only in JSON.
	first := true
	for _, e := range p.Entries {
		for _, msg := range e.Warnings {
			if first {
				if _, err := fmt.Fprintln(w, "\nWARNINGS"); err != nil {
					return err
				}
				first = false
			}
			if _, err := fmt.Fprintf(w, "%s: %s\n", objectName(e.Source), msg); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectName prints an identity as kubectl does: resource.group/[ns/]name.
func objectName(id contract.Identity) string {
	gr := id.Resource
	if id.Group != "" {
		gr += "." + id.Group
	}
	name := id.Name
	if name == "" {
		name = id.GenerateName + "*"
	}
	if id.Namespace != "" {
		return gr + "/" + id.Namespace + "/" + name
	}
	return gr + "/" + name
}
