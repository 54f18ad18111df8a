package harness

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
)

// The JUnit XML report, in the shape the upstream harness writes: one testsuite, two
// bookkeeping cases for the output directory, then one case per test named
// `<testName> [Binary:"..."] [Controllers:[...]] [Directory:"..."]`.

type junitSuite struct {
	XMLName   xml.Name    `xml:"testsuite"`
	Name      string      `xml:"name,attr"`
	Tests     uint        `xml:"tests,attr"`
	Skipped   uint        `xml:"skipped,attr"`
	Failures  uint        `xml:"failures,attr"`
	Duration  float64     `xml:"time,attr"`
	TestCases []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Duration  float64       `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Output  string `xml:",chardata"`
}

// JUnitName is a test's name in the JUnit report, as upstream spells it.
func (t Test) JUnitName() string {
	d := t.Description
	if d == nil {
		return t.Dir
	}
	return fmt.Sprintf("%v [Binary:%q] [Controllers:%q] [Directory:%q]", d.TestName, d.BinaryName, d.Controllers, t.Dir)
}

// WriteJUnit writes the report as JUnit XML to path. Warnings go to the case's system-out.
func (r *Report) WriteJUnit(path string) error {
	suite := junitSuite{TestCases: []junitCase{{Name: "remove output directory"}, {Name: "ensure output directory"}}}
	for _, res := range r.Results {
		c := junitCase{Name: res.Test.JUnitName(), Duration: res.Duration.Round(1e9).Seconds()}
		if !res.Passed() {
			c.Failure = &junitFailure{Message: fmt.Sprintf("%d problems", len(res.Problems)), Output: strings.Join(res.Problems, "\n")}
			suite.Failures++
		}
		if len(res.Warnings) > 0 {
			c.SystemOut = "warning: " + strings.Join(res.Warnings, "\nwarning: ")
		}
		suite.Duration += c.Duration
		suite.TestCases = append(suite.TestCases, c)
	}
	suite.Tests = uint(len(suite.TestCases))
	data, err := xml.MarshalIndent(suite, "", "    ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
