package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/hack/bench/fleet"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "benchop:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	name := os.Getenv("BENCH_OPERATOR")
	i, err := fleet.OperatorIndex(name)
	if err != nil {
		return fmt.Errorf("BENCH_OPERATOR: %w", err)
	}
	if len(args) == 0 {
		return errors.New("usage: benchop input-resources|output-resources|apply-configuration")
	}
	switch args[0] {
	case "input-resources":
		out, err := contract.MarshalInputResources(fleet.InputResources(i))
		if err != nil {
			return fmt.Errorf("input-resources: %w", err)
		}
		_, err = os.Stdout.Write(out)
		return err
	case "output-resources":
		out, err := contract.MarshalOutputResources(fleet.OutputResources(name))
		if err != nil {
			return fmt.Errorf("output-resources: %w", err)
		}
		_, err = os.Stdout.Write(out)
		return err
	case "apply-configuration":
		return applyConfiguration(name, args[1:])
	}
	return fmt.Errorf("unknown command %q", args[0])
}

func applyConfiguration(name string, args []string) error {
	fs := flag.NewFlagSet("apply-configuration", flag.ContinueOnError)
	inputDir := fs.String("input-dir", "", "input directory")
	outputDir := fs.String("output-dir", "", "output directory")
	fs.String("now", "", "ignored")
	fs.String("controllers", "", "ignored")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("apply-configuration: %w", err)
	}
	in, err := contract.ReadInputDir(*inputDir, contract.ReadOptions{})
	if err != nil {
		return fmt.Errorf("apply-configuration: %w", err)
	}
	var seq int64
	for _, o := range in.Objects() {
		if o.Namespace == fleet.Namespace {
			seq = max(seq, fleet.Seq(o.Object.GetAnnotations()))
		}
	}
	body := fmt.Sprintf("apiVersion: v1\ndata:\n  %s: %q\nkind: ConfigMap\nmetadata:\n  name: %s\n  namespace: %s\n",
		fleet.SeqKey, strconv.FormatInt(seq, 10), fleet.OutputName(name), fleet.OutputNamespace)
	out := &contract.OutputDir{
		HasControllerResults: true,
		ControllerResults: &contract.ControllerResults{ControllerResults: []contract.ControllerResult{
			{ControllerName: name + "-Output", Status: contract.ControllerSucceeded},
		}},
		Mutations: []contract.Mutation{{
			Class: contract.ClassManagement,
			Metadata: contract.Metadata{
				Action: contract.ActionApply, ControllerInstanceName: name + "-Output", FieldManager: fleet.FieldManager,
				Name: fleet.OutputName(name), Namespace: fleet.OutputNamespace,
				ResourceType: contract.ResourceType{Resource: "configmaps", Version: "v1"},
			},
			Body:    []byte(body),
			Options: []byte("fieldManager: " + fleet.FieldManager + "\nforce: true\n"),
		}},
	}
	if err := contract.WriteOutputDir(*outputDir, out, contract.WriteOptions{}); err != nil {
		return fmt.Errorf("apply-configuration: %w", err)
	}
	return nil
}
