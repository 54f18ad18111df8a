package contract_test

import (
	"bytes"
	"testing"

	"github.com/topolayer/topolayer/contract"
)

// FuzzParseOutputResources: any bytes parse or fail without panicking, and whatever parses is
// printed, parsed again and printed to the same bytes: the printed form is a fixed point.
func FuzzParseOutputResources(f *testing.F) {
	f.Add([]byte("configurationResources: {}\nmanagementResources: {}\nuserWorkloadResources: {}\n"))
	f.Add([]byte("configurationResources:\n  exactResources:\n  - {group: config.openshift.io, version: v1, resource: ingresses, name: cluster}\n" +
		"managementResources:\n  eventingNamespaces: [demo-operator]\n  exactResources:\n  - {group: \"\", version: v1, resource: namespaces, name: demo-ns}\n  - {group: apps, version: v1, resource: deployments, namespace: demo-ns, name: demo}\n" +
		"userWorkloadResources:\n  exactResources:\n  - {group: rbac.authorization.k8s.io, version: v1, resource: clusterroles, name: \"system:demo:reader\"}\n" +
		"  generatedNameResources:\n  - {group: certificates.k8s.io, version: v1, resource: certificatesigningrequests, name: \"system:demo:client-\"}\n"))
	f.Add([]byte("managementResources:\n  eventingNamespaces: [\"\"]\n"))
	f.Add([]byte("{\"managementResources\": {\"exactResources\": [{\"group\": \"\", \"resource\": \"secrets\", \"name\": \"x\", \"version\": \"v1\"}]}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		o, ok := checkFixedPoint(t, data, contract.ParseOutputResources, contract.MarshalOutputResources)
		if !ok {
			return
		}
		for _, c := range contract.Classes()[:3] {
			for _, e := range o.ForClass(c).ExactResources {
				id := contract.Identity{Group: e.Group, Version: e.Version, Resource: e.Resource, Namespace: e.Namespace, Name: e.Name}
				if !o.ForClass(c).Matches(id) {
					t.Fatalf("%s: declared %+v does not match itself", c, e)
				}
			}
		}
	})
}

// FuzzParseInputResources: as FuzzParseOutputResources, for input-resources documents (label
// selectors and JSONPath references included).
func FuzzParseInputResources(f *testing.F) {
	f.Add([]byte("applyConfigurationResources: {}\noperandResources:\n  configurationResources: {}\n  managementResources: {}\n  userWorkloadResources: {}\n"))
	f.Add([]byte("applyConfigurationResources:\n  exactResources:\n  - {group: config.openshift.io, version: v1, resource: infrastructures, name: cluster}\n" +
		"  generatedNameResources:\n  - {group: \"\", version: v1, resource: secrets, namespace: demo-ns, name: token-}\n" +
		"  labelSelectedResources:\n  - group: \"\"\n    version: v1\n    resource: secrets\n    namespace: demo-ns\n    labelSelector:\n      matchLabels: {app.example.io/owner: demo}\n" +
		"  resourceReferences:\n  - type: ImplicitNamespacedReference\n    referringResource: {group: config.openshift.io, version: v1, resource: apiservers, name: cluster}\n" +
		"    implicitNamespacedReference:\n      group: \"\"\n      version: v1\n      resource: secrets\n      namespace: openshift-config\n" +
		"      nameJSONPath: $.spec.servingCerts.namedCertificates[*].servingCertificate.name\n"))
	f.Add([]byte("applyConfigurationResources:\n  resourceReferences:\n  - type: ClusterScopedReference\n    referringResource: {group: a, version: v1, resource: b, name: c}\n    clusterScopedReference: {group: a, version: v1, resource: d, nameJSONPath: '$.spec[?(@.name == \"a\" && @.x == \"b\")].n'}\n"))
	f.Add([]byte("applyConfigurationResources:\n  labelSelectedResources:\n  - {group: \"\", version: v1, resource: secrets, labelSelector: {matchLabels: {\"a/b/c\": x}}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFixedPoint(t, data, contract.ParseInputResources, contract.MarshalInputResources)
	})
}

// FuzzParseTestDescription: any test.yaml parses or fails without panicking, and whatever
// parses yields apply-configuration arguments that name the directories given.
func FuzzParseTestDescription(f *testing.F) {
	f.Add([]byte("binaryName: ./demo-operator\ntestName: widget creation\ndescription: d\ntestType: ApplyConfiguration\nnow: 2025-01-01T00:00:00Z\ncontrollers: [demo-WidgetController]\ndesiredError: NonZeroReturn\n"))
	f.Add([]byte("binaryName: x\ntestName: y\ndescription: z\ntestType: ApplyConfiguration\nnow: null\n"))
	f.Add([]byte("testType: Other\ndesiredError: Sometimes\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := contract.ParseTestDescription(data)
		if err != nil {
			return
		}
		args := d.Args("IN", "OUT")
		if len(args) < 5 || args[0] != "apply-configuration" {
			t.Fatalf("Args = %q", args)
		}
	})
}

// checkFixedPoint parses input; when it parses (ok), it checks that the printed form of the
// document (print) parses and prints again to the same bytes.
func checkFixedPoint[T any](t *testing.T, input []byte, parse func([]byte) (T, error), print func(T) ([]byte, error)) (doc T, ok bool) {
	t.Helper()
	doc, err := parse(input)
	if err != nil {
		return doc, false
	}
	printed, err := print(doc)
	if err != nil {
		t.Fatalf("an accepted document does not print: %v\ninput:\n%s", err, input)
	}
	reparsed, err := parse(printed)
	if err != nil {
		t.Fatalf("a printed document does not parse: %v\ninput:\n%s\nprinted:\n%s", err, input, printed)
	}
	again, err := print(reparsed)
	if err != nil {
		t.Fatalf("a printed document does not print again: %v\ninput:\n%s\nprinted:\n%s", err, input, printed)
	}
	if !bytes.Equal(printed, again) {
		t.Fatalf("printing is not a fixed point:\ninput:\n%s\nprinted:\n%s\nprinted again:\n%s", input, printed, again)
	}
	return doc, true
}
