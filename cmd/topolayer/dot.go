package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/topolayer/topolayer/internal/translate/plans"
	"github.com/topolayer/topolayer/routing"
)

// printPlanDot writes the plan as a Graphviz graph: operator -> class -> rule -> target
// cluster (or disposition), each edge labelled with the number of mutations that took it.
func printPlanDot(w io.Writer, p *plans.Plan) error {
	type edge struct{ from, to string }
	edges := map[edge]int{}
	nodes := map[string]string{} // id -> attributes
	node := func(id, label, shape string) string {
		nodes[id] = fmt.Sprintf("label=%s, shape=%s", strconv.Quote(label), shape)
		return id
	}
	for _, e := range p.Entries {
		op := e.Operator
		if op == "" {
			op = "operator"
		}
		o := node("op:"+op, op, "box")
		c := node("class:"+string(e.Class), string(e.Class), "folder")
		r := node("rule:"+e.Rule, e.Rule, "ellipse")
		var t string
		switch e.Disposition {
		case routing.Apply:
			t = node("cluster:"+e.Target.Cluster, e.Target.Cluster+" cluster", "cylinder")
		default:
			t = node("disposition:"+string(e.Disposition), string(e.Disposition), "octagon")
		}
		edges[edge{o, c}]++
		edges[edge{c, r}]++
		edges[edge{r, t}]++
	}
	fmt.Fprintf(w, "digraph plan {\n  rankdir=LR;\n  label=%s;\n  node [fontname=\"Helvetica\"];\n", strconv.Quote(p.Topology+" plan"))
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		fmt.Fprintf(w, "  %s [%s];\n", strconv.Quote(id), nodes[id])
	}
	keys := slices.SortedFunc(maps.Keys(edges), func(a, b edge) int {
		if a.from != b.from {
			return compare(a.from, b.from)
		}
		return compare(a.to, b.to)
	})
	for _, e := range keys {
		fmt.Fprintf(w, "  %s -> %s [label=\"%d\"];\n", strconv.Quote(e.from), strconv.Quote(e.to), edges[e])
	}
	_, err := fmt.Fprintln(w, "}")
	return err
}

func compare(a, b string) int { return strings.Compare(a, b) }
