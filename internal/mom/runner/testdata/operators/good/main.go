// Command good is a well-behaved MOM contract operator for the runner's tests. It declares
// what it reads and writes, and apply-configuration writes two mutations and
// controller-results.yaml, and reports its flags, working directory and HOME on stderr.
// BAD_DECLARATIONS=1 makes it print declarations that do not parse.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/contracttest"
)

const inputResources = `applyConfigurationResources:
  exactResources:
  - group: ""
    version: v1
    resource: configmaps
    namespace: openshift-sample
    name: settings
operandResources:
  configurationResources: {}
  managementResources: {}
  userWorkloadResources: {}
`

func main() {
	if len(os.Args) < 2 {
		fail("usage: good input-resources|output-resources|apply-configuration")
	}
	bad := os.Getenv("BAD_DECLARATIONS") == "1"
	switch os.Args[1] {
	case "input-resources":
		if bad {
			fmt.Print("applyConfigurationResources:\n  exactResources:\n  - resource: configmaps\n")
			return
		}
		fmt.Print(inputResources)
	case "output-resources":
		if bad {
			fmt.Print("notAClass: {}\n")
			return
		}
		data, err := contract.MarshalOutputResources(contracttest.ValidOutputResources())
		if err != nil {
			fail(err.Error())
		}
		os.Stdout.Write(data)
	case "apply-configuration":
		fs := flag.NewFlagSet("apply-configuration", flag.ExitOnError)
		in := fs.String("input-dir", "", "")
		out := fs.String("output-dir", "", "")
		now := fs.String("now", "", "")
		controllers := fs.String("controllers", "", "")
		_ = fs.Parse(os.Args[2:])
		wd, _ := os.Getwd()
		fmt.Fprintf(os.Stderr, "input-dir=%s\noutput-dir=%s\nnow=%s\ncontrollers=%s\ncwd=%s\nhome=%s\n", *in, *out, *now, *controllers, wd, os.Getenv("HOME"))
		if _, err := os.Stat(*in); err != nil {
			fail(err.Error())
		}
		dir := &contract.OutputDir{
			Mutations: contracttest.ValidMutations()[:2],
			ControllerResults: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
				{ControllerName: "sample", Status: contract.ControllerSucceeded},
			}},
			HasControllerResults: true,
		}
		if err := contract.WriteOutputDir(*out, dir, contract.WriteOptions{}); err != nil {
			fail(err.Error())
		}
		fmt.Println("wrote 2 mutations")
	default:
		fail("unknown command " + os.Args[1])
	}
}

func fail(msg string) {
	fmt.Fprintln(os.Stderr, msg)
	os.Exit(1)
}
