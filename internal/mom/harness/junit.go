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
	SystemErr string        `xml:"system-err,omitempty"`
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

// WriteJUnit writes the report as JUnit XML to path. Each case carries the operator's stdout
// (system-out, followed by the warnings) and stderr (system-err); a failure's message names
// its first problems, its body has them all.
func (r *Report) WriteJUnit(path string) error {
	suite := junitSuite{TestCases: []junitCase{{Name: "remove output directory"}, {Name: "ensure output directory"}}}
	for _, res := range r.Results {
		c := junitCase{Name: res.Test.JUnitName(), Duration: res.Duration.Round(1e9).Seconds(), SystemOut: res.Stdout, SystemErr: res.Stderr}
		if !res.Passed() {
			c.Failure = &junitFailure{Message: failureMessage(res.Problems), Output: strings.Join(res.Problems, "\n")}
			suite.Failures++
		}
		if len(res.Warnings) > 0 {
			if c.SystemOut != "" && !strings.HasSuffix(c.SystemOut, "\n") {
				c.SystemOut += "\n"
			}
			c.SystemOut += "warning: " + strings.Join(res.Warnings, "\nwarning: ")
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

// failureMessage is a failure's one-line summary: the first line of its first problems (at
// most three), and how many more there are.
func failureMessage(problems []string) string {
	const shown = 3
	var firsts []string
	for _, p := range problems[:min(len(problems), shown)] {
		line, rest, _ := strings.Cut(p, "\n")
		first := strings.TrimSuffix(strings.TrimSpace(line), ":")
		if change := firstChange(rest); change != "" {
			first += ": " + change
		}
		firsts = append(firsts, first)
	}
	msg := strings.Join(firsts, "; ")
	if n := len(problems) - shown; n > 0 {
		msg += fmt.Sprintf("; and %d more", n)
	}
	return msg
}

// firstChange is the first removed and the first added line of a unified diff, with their
// spaces collapsed ("-a +b"); "" when diff has neither.
func firstChange(diff string) string {
	var minus, plus string
	for _, l := range strings.Split(diff, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "---") || strings.HasPrefix(l, "+++") || l == "" {
			continue
		}
		squeezed := l[:1] + strings.Join(strings.Fields(l[1:]), " ")
		switch {
		case l[0] == '-' && minus == "" && plus == "":
			minus = squeezed
		case l[0] == '+' && plus == "":
			plus = squeezed
		}
		if plus != "" {
			break
		}
	}
	return strings.TrimSpace(minus + " " + plus)
}
