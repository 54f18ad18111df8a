package crds_test

import (
	"testing"

	"github.com/topolayer/topolayer/hosted/shadow"
	"github.com/topolayer/topolayer/internal/samples/crds"
)

// TestCRDsAreValid: every embedded CRD decodes strictly, is valid as the API server would
// check it, and has a valid shadow.
func TestCRDsAreValid(t *testing.T) {
	list, err := crds.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) == 0 {
		t.Fatal("no CRD embedded")
	}
	for _, crd := range list {
		if err := shadow.Validate(crd); err != nil {
			t.Errorf("%s: %v", crd.Name, err)
		}
		s, err := shadow.CRD(crd)
		if err != nil {
			t.Errorf("%s: shadow: %v", crd.Name, err)
			continue
		}
		if err := shadow.Validate(s); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
	}
}
