package shadow

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	"k8s.io/apimachinery/pkg/runtime"
)

// apiextensionsScheme converts CRDs between v1 and the internal version the validation
// package takes. It is built once, never modified afterwards, and is not the global scheme.
var apiextensionsScheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	install.Install(s)
	return s
})

// Validate reports what the API server (apiextensions-apiserver v0.37) would reject in a
// request to create crd: crd is defaulted as the server decodes it, its status replaced as
// the server's create strategy does (no conditions, the storage version stored), and checked
// with validation.ValidateCustomResourceDefinition: names, scope, versions, structural schemas,
// CEL rules and their cost, printer columns, subresources, conversion. crd is not modified.
// The error names the CRD and lists every problem found.
func Validate(crd *apiextensionsv1.CustomResourceDefinition) error {
	if crd == nil {
		return errors.New("validate a nil CustomResourceDefinition")
	}
	scheme := apiextensionsScheme()
	in := crd.DeepCopy()
	scheme.Default(in)
	var out apiextensions.CustomResourceDefinition
	if err := scheme.Convert(in, &out, nil); err != nil {
		return fmt.Errorf("crd %s: %w", crd.Name, err)
	}
	out.Status = apiextensions.CustomResourceDefinitionStatus{}
	for _, v := range out.Spec.Versions {
		if v.Storage {
			out.Status.StoredVersions = []string{v.Name}
			break
		}
	}
	if errs := validation.ValidateCustomResourceDefinition(context.Background(), &out); len(errs) > 0 {
		return fmt.Errorf("crd %s: %w", crd.Name, errs.ToAggregate())
	}
	return nil
}
