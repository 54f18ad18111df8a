package parity_test

import (
	"fmt"

	"github.com/topolayer/topolayer/config"
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate"
	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/topology"
)

// Compare the two placements of a ConfigMap and a Namespace that an operator writes.
func ExampleCompare() {
	out := &contract.OutputDir{Mutations: []contract.Mutation{
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/namespaces", "", "demo",
			`{apiVersion: v1, kind: Namespace, metadata: {name: demo}}`),
		mutation(contract.ClassManagement, contract.ActionCreate, "/v1/configmaps", "demo", "settings",
			`{apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: demo}, data: {k: v}}`),
	}}
	cfg, err := config.Parse([]byte(hostedConfig))
	if err != nil {
		panic(err)
	}
	he, err := topology.Engine(cfg, "demo-operator", nil)
	if err != nil {
		panic(err)
	}
	report, err := parity.Compare(translate.Standalone("demo-operator", nil).Plan(out), he.Plan(out), parity.OptionsFor(he))
	if err != nil {
		panic(err)
	}
	for _, o := range report.Objects {
		fmt.Printf("%s: %s\n", o.Source, o.Outcome)
		for _, d := range o.Differences {
			if d.Aspect != parity.AspectBody {
				fmt.Printf("  %s %s: %s -> %s: %s\n", d.Aspect, d.Path, d.Standalone, d.Hosted, d.Causes[0].Kind)
			}
		}
	}
	fmt.Println(report.Summary)
	fmt.Println(report.Err())
	// Output:
	// configmaps demo/settings: renamed
	//   cluster : cluster -> management: placed
	//   identity namespace: demo -> clusters-example: renamed
	//   identity name: settings -> demo--settings: renamed
	// namespaces demo: absorbed
	//   disposition : written -> absorbed: absorbed
	// 2 objects: 0 identical, 1 renamed only, 0 transformed, 1 absorbed, 0 unexplained
	// <nil>
}
