package config

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/topolayer/topolayer/contract"
)

// InputEnvVar is one variable of an operator's environment whose value is read, at every
// run, from one of the objects gathered as its inputs: the way a resident operator's
// Deployment receives the cluster Proxy's HTTPS_PROXY, or mounts the Proxy's trusted CA.
// The object must be among the operator's declared inputs (its own or a supplement), so a
// change of the value is an input change that runs the operator again.
type InputEnvVar struct {
	// Name is the variable's name.
	Name string `json:"name"`
	// ValueFrom is where its value is read.
	ValueFrom InputField `json:"valueFrom"`
	// As is what the variable holds: Value (default) the field's value; File the path of a
	// file in the run's directory holding the value; Directory the path of a directory
	// holding that one file (SSL_CERT_DIR: Go reads it besides the system's bundle).
	As InputEnvForm `json:"as,omitempty"`
}

// InputField is one field of one object among an operator's gathered inputs.
type InputField struct {
	// Input names the object.
	Input InputObjectRef `json:"input"`
	// FieldPath is the field, in the contract's JSONPath dialect without the leading `$.`:
	// status.httpsProxy, data["ca-bundle.crt"]. A Secret's data values are decoded.
	FieldPath string `json:"fieldPath"`
}

// InputObjectRef names one object among an operator's gathered inputs, in its standalone
// form (namespaces as on a standalone cluster, whatever the topology).
type InputObjectRef struct {
	// Group and Resource are the object's type (Group "" for the core group).
	Group    string `json:"group"`
	Resource string `json:"resource"`
	// Namespace is the object's namespace; empty for a cluster-scoped object.
	Namespace string `json:"namespace,omitempty"`
	// Name is the object's name. Exactly one of Name and NameFrom is set.
	Name string `json:"name,omitempty"`
	// NameFrom reads the name from a field of another input (the ConfigMap the cluster
	// Proxy's spec.trustedCA.name names).
	NameFrom *InputNameRef `json:"nameFrom,omitempty"`
}

// InputNameRef is a field of an input object that holds another object's name.
type InputNameRef struct {
	// Group, Resource, Namespace and Name name the object holding the name.
	Group     string `json:"group"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// FieldPath is the field holding the name, as InputField.FieldPath.
	FieldPath string `json:"fieldPath"`
}

// InputEnvForm is what an InputEnvVar holds.
type InputEnvForm string

// Forms of an InputEnvVar.
const (
	// InputEnvValue: the variable is the field's value.
	InputEnvValue InputEnvForm = "Value"
	// InputEnvFile: the variable is the path of a file holding the field's value.
	InputEnvFile InputEnvForm = "File"
	// InputEnvDirectory: the variable is the path of a directory holding one file, the
	// field's value.
	InputEnvDirectory InputEnvForm = "Directory"
)

// Object is the named object's reference, for messages and lookups.
func (r InputNameRef) Object() InputObjectRef {
	return InputObjectRef{Group: r.Group, Resource: r.Resource, Namespace: r.Namespace, Name: r.Name}
}

// String names the object as contract.Identity does; a name read from another input is
// shown as <that input's name and field>.
func (r InputObjectRef) String() string {
	name := r.Name
	if r.NameFrom != nil {
		name = "<" + r.NameFrom.Object().String() + " " + r.NameFrom.FieldPath + ">"
	}
	id := contract.Identity{Group: r.Group, Resource: r.Resource, Namespace: r.Namespace, Name: name}
	return id.String()
}

// deniedInputEnv are variables an input may not set: the sandbox's own.
var deniedInputEnv = []string{"PATH", "HOME", "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"}

// validateInputEnv checks an operator's envFromInputs: well-formed, unique, not a variable
// of its static env or of the sandbox's.
func validateInputEnv(p *field.Path, op Operator) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]int{}
	for i, v := range op.EnvFromInputs {
		pi := p.Index(i)
		np := pi.Child("name")
		switch {
		case v.Name == "":
			errs = append(errs, field.Required(np, "the variable's name"))
		case len(validation.IsCIdentifier(v.Name)) > 0:
			errs = append(errs, field.Invalid(np, v.Name, strings.Join(validation.IsCIdentifier(v.Name), "; ")))
		}
		for _, d := range deniedInputEnv {
			if strings.EqualFold(v.Name, d) {
				errs = append(errs, field.Forbidden(np, v.Name+" is the sandbox's: operators run offline, with a PATH and HOME of their own"))
			}
		}
		if _, dup := op.Env[v.Name]; dup {
			errs = append(errs, field.Duplicate(np, v.Name+" (also in env)"))
		}
		if j, dup := seen[v.Name]; dup && v.Name != "" {
			errs = append(errs, field.Duplicate(np, fmt.Sprintf("%s (also envFromInputs[%d])", v.Name, j)))
		}
		seen[v.Name] = i
		switch v.As {
		case "", InputEnvValue, InputEnvFile, InputEnvDirectory:
		default:
			errs = append(errs, field.NotSupported(pi.Child("as"), v.As, []InputEnvForm{InputEnvValue, InputEnvFile, InputEnvDirectory}))
		}
		vp := pi.Child("valueFrom")
		errs = append(errs, validateFieldPath(vp.Child("fieldPath"), v.ValueFrom.FieldPath)...)
		ip, in := vp.Child("input"), v.ValueFrom.Input
		errs = append(errs, validateInputObject(ip, in.Group, in.Resource, in.Namespace)...)
		switch {
		case in.Name == "" && in.NameFrom == nil:
			errs = append(errs, field.Required(ip.Child("name"), "the object's name, or nameFrom"))
		case in.Name != "" && in.NameFrom != nil:
			errs = append(errs, field.Forbidden(ip.Child("nameFrom"), "name and nameFrom are exclusive"))
		case in.NameFrom != nil:
			fp, nf := ip.Child("nameFrom"), in.NameFrom
			errs = append(errs, validateInputObject(fp, nf.Group, nf.Resource, nf.Namespace)...)
			if nf.Name == "" {
				errs = append(errs, field.Required(fp.Child("name"), "the name of the object holding the name"))
			}
			errs = append(errs, validateFieldPath(fp.Child("fieldPath"), nf.FieldPath)...)
		}
	}
	return errs
}

func validateInputObject(p *field.Path, group, resource, namespace string) field.ErrorList {
	errs := validateResource(p.Child("resource"), group, resource)
	if namespace != "" {
		errs = append(errs, dnsLabel(p.Child("namespace"), namespace)...)
	}
	return errs
}

// validateFieldPath checks a field path: the contract's JSONPath without `$.`.
func validateFieldPath(p *field.Path, fp string) field.ErrorList {
	if fp == "" {
		return field.ErrorList{field.Required(p, "a field path, e.g. status.httpsProxy or data[\"ca-bundle.crt\"]")}
	}
	if strings.HasPrefix(fp, "$") || strings.HasPrefix(fp, ".") {
		return field.ErrorList{field.Invalid(p, fp, "without the leading $ or dot: status.httpsProxy")}
	}
	if _, err := contract.ParseJSONPath("$." + fp); err != nil {
		return field.ErrorList{field.Invalid(p, fp, "not a field path (status.httpsProxy, data[\"ca-bundle.crt\"]): "+err.Error())}
	}
	return nil
}

// ValidateInputEnv checks that every object vars (an operator's envFromInputs) read is
// among its inputs, as declared (its own input-resources with the supplements added): an
// object named exactly is declared by an exact resource, a label selection or a reference of
// its type and namespace, or is a reference's referring object; an object named by nameFrom
// by a label selection or a reference of its type and namespace. The errors name the entry
// and the field.
func ValidateInputEnv(vars []InputEnvVar, in *contract.InputResources) error {
	var errs field.ErrorList
	p := field.NewPath("envFromInputs")
	for i, v := range vars {
		ip := p.Index(i).Child("valueFrom", "input")
		r := v.ValueFrom.Input
		if r.NameFrom != nil {
			if !declares(in, r.NameFrom.Object(), false) {
				errs = append(errs, field.Invalid(ip.Child("nameFrom"), r.NameFrom.Object().String(), fmt.Sprintf("%s: not among the operator's inputs: declare it (supplements.inputs)", v.Name)))
			}
		}
		if !declares(in, r, r.NameFrom != nil) {
			how := "an exactResources entry"
			if r.NameFrom != nil {
				how = "a resourceReferences entry of its type and namespace"
			}
			errs = append(errs, field.Invalid(ip, r.String(), fmt.Sprintf("%s: not among the operator's inputs: declare it (supplements.inputs, %s)", v.Name, how)))
		}
	}
	return errs.ToAggregate()
}

// declares reports whether in declares the object r names; anyName: r's name is known only
// at run time, so exact resources do not count.
func declares(in *contract.InputResources, r InputObjectRef, anyName bool) bool {
	if in == nil {
		return false
	}
	same := func(t contract.ResourceTypeIdentifier) bool { return t.Group == r.Group && t.Resource == r.Resource }
	l := in.ApplyConfigurationResources
	for _, e := range l.ExactResources {
		if !anyName && same(e.ResourceTypeIdentifier) && e.Namespace == r.Namespace && e.Name == r.Name {
			return true
		}
	}
	for _, s := range l.LabelSelectedResources {
		if same(s.ResourceTypeIdentifier) && (s.Namespace == "" || s.Namespace == r.Namespace) {
			return true
		}
	}
	for _, ref := range l.ResourceReferences {
		if e := ref.ReferringResource; !anyName && same(e.ResourceTypeIdentifier) && e.Namespace == r.Namespace && e.Name == r.Name {
			return true // gathered with what it names
		}
		switch {
		case ref.ImplicitNamespacedReference != nil:
			t := ref.ImplicitNamespacedReference
			if same(t.ResourceTypeIdentifier) && t.Namespace == r.Namespace {
				return true
			}
		case ref.ExplicitNamespacedReference != nil:
			if same(ref.ExplicitNamespacedReference.ResourceTypeIdentifier) && r.Namespace != "" {
				return true
			}
		case ref.ClusterScopedReference != nil:
			if same(ref.ClusterScopedReference.ResourceTypeIdentifier) && r.Namespace == "" {
				return true
			}
		}
	}
	return false
}
