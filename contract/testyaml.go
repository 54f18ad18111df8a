package contract

import (
	"errors"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// TestFile is the name of an upstream harness test description.
const TestFile = "test.yaml"

// TestTypeApplyConfiguration is the only test type of the upstream harness.
const TestTypeApplyConfiguration = "ApplyConfiguration"

// DesiredErrorNonZeroReturn says the operator is expected to exit non-zero.
const DesiredErrorNonZeroReturn = "NonZeroReturn"

// TestDescription is one test.yaml of the upstream apply-configuration test harness.
type TestDescription struct {
	// BinaryName is the operator binary, run as given.
	BinaryName string `json:"binaryName"`
	// TestName names the test; it need not be unique.
	TestName string `json:"testName"`
	// Description says what the test is about.
	Description string `json:"description"`
	// TestType is always ApplyConfiguration.
	TestType string `json:"testType"`
	// Now is passed as --now when set.
	Now metav1.Time `json:"now,omitzero"`
	// Controllers is passed as --controllers when set.
	Controllers []string `json:"controllers,omitempty"`
	// DesiredError is "" or NonZeroReturn.
	DesiredError string `json:"desiredError,omitempty"`
}

// ParseTestDescription decodes and validates a test.yaml; unknown keys are refused.
func ParseTestDescription(data []byte) (*TestDescription, error) {
	return parseTestDescription(data, true)
}

// ParseTestDescriptionLenient decodes and validates a test.yaml as the upstream harness
// does: unknown keys are ignored, and so is a desiredError other than NonZeroReturn (it
// means an exit zero is wanted).
func ParseTestDescriptionLenient(data []byte) (*TestDescription, error) {
	return parseTestDescription(data, false)
}

func parseTestDescription(data []byte, strict bool) (*TestDescription, error) {
	var t TestDescription
	unmarshal := yaml.Unmarshal
	if strict {
		unmarshal = yaml.UnmarshalStrict
	}
	if err := unmarshal(data, &t); err != nil {
		return nil, fmt.Errorf("decode %s: %w", TestFile, err)
	}
	var errs []error
	for field, v := range map[string]string{"binaryName": t.BinaryName, "testName": t.TestName, "description": t.Description} {
		if v == "" {
			errs = append(errs, fieldError(field, errors.New("required")))
		}
	}
	if t.TestType != TestTypeApplyConfiguration {
		errs = append(errs, fieldError("testType", fmt.Errorf("%q, want %s", t.TestType, TestTypeApplyConfiguration)))
	}
	if strict && t.DesiredError != "" && t.DesiredError != DesiredErrorNonZeroReturn {
		errs = append(errs, fieldError("desiredError", fmt.Errorf("%q, want empty or %s", t.DesiredError, DesiredErrorNonZeroReturn)))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &t, nil
}

// Args returns the apply-configuration arguments the harness passes for this test. --now is
// in the local time zone, with its offset, as the upstream harness passes it.
func (t *TestDescription) Args(inputDir, outputDir string) []string {
	args := []string{"apply-configuration", "--input-dir", inputDir, "--output-dir", outputDir}
	if !t.Now.IsZero() {
		args = append(args, "--now", t.Now.Local().Format(time.RFC3339))
	}
	if len(t.Controllers) > 0 {
		args = append(args, "--controllers", strings.Join(t.Controllers, ","))
	}
	return args
}
