package fixtureparity

import (
	_ "embed"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsyaml "sigs.k8s.io/yaml"
)

// Reason is one row of the reasons table: why the leaves it matches may differ.
type Reason struct {
	// Name names the row in the report.
	Name string `json:"name"`
	// Pairs limits the row to these pairs (Pair.Name); empty: every pair.
	Pairs []string `json:"pairs,omitempty"`
	// Path is a pattern of leaf paths: "**" matches anything, "*" anything but ".", "[" and
	// "]", "{a,b}" either a or b; every other character is itself.
	Path string `json:"path"`
	// Status limits the row to missing, extra or different leaves; empty: any of them.
	Status []Status `json:"status,omitempty"`
	// Fixture and Placed, when set, are regular expressions the whole value must match
	// (strings as they are, other values as JSON); a side that lacks the leaf matches none.
	Fixture string `json:"fixture,omitempty"`
	Placed  string `json:"placed,omitempty"`
	// Reason says why, in words a reviewer can check.
	Reason string `json:"reason"`

	path, fixture, placed *regexp.Regexp
}

// Reasons is a reasons table, checked and compiled by ParseReasons.
type Reasons struct {
	Rows []Reason `json:"reasons"`
}

//go:embed reasons.yaml
var defaultReasons []byte

// DefaultReasons is the committed table (reasons.yaml beside this file): why HyperShift's
// oauth-openshift and the one topolayer places from the real operator's output may differ.
func DefaultReasons() *Reasons {
	r, err := ParseReasons(defaultReasons)
	if err != nil {
		panic(fmt.Sprintf("fixtureparity: reasons.yaml: %v", err)) // a bug in the committed table; a test checks it
	}
	return r
}

// ParseReasons reads and checks a reasons table (YAML or JSON, unknown fields refused):
// every row has a name (unique), a path and a reason, its patterns compile, its statuses are
// missing, extra or different. Every problem is reported with its field path.
func ParseReasons(data []byte) (*Reasons, error) {
	var r Reasons
	if err := sigsyaml.UnmarshalStrict(data, &r); err != nil {
		return nil, err
	}
	var errs field.ErrorList
	names := map[string]bool{}
	for i := range r.Rows {
		row := &r.Rows[i]
		p := field.NewPath("reasons").Index(i)
		switch {
		case row.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names[row.Name]:
			errs = append(errs, field.Duplicate(p.Child("name"), row.Name))
		}
		names[row.Name] = true
		if strings.TrimSpace(row.Reason) == "" {
			errs = append(errs, field.Required(p.Child("reason"), "say why the leaves may differ"))
		}
		if row.Path == "" {
			errs = append(errs, field.Required(p.Child("path"), ""))
		}
		row.path = regexp.MustCompile("^" + globToRegexp(row.Path) + "$")
		for j, s := range row.Status {
			if !slices.Contains([]Status{Missing, Extra, Different}, s) {
				errs = append(errs, field.NotSupported(p.Child("status").Index(j), s, []Status{Missing, Extra, Different}))
			}
		}
		var err error
		if row.fixture, err = compileValue(row.Fixture); err != nil {
			errs = append(errs, field.Invalid(p.Child("fixture"), row.Fixture, err.Error()))
		}
		if row.placed, err = compileValue(row.Placed); err != nil {
			errs = append(errs, field.Invalid(p.Child("placed"), row.Placed, err.Error()))
		}
	}
	if len(errs) > 0 {
		return nil, errs.ToAggregate()
	}
	return &r, nil
}

func compileValue(s string) (*regexp.Regexp, error) {
	if s == "" {
		return nil, nil
	}
	re, err := regexp.Compile("^(?:" + s + ")$")
	if err != nil {
		return nil, err
	}
	return re, nil
}

// globToRegexp turns a path pattern into a regular expression: "**" any run of characters,
// "*" any run without ".", "[" or "]", "{a,b}" a or b, everything else literal.
func globToRegexp(glob string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(glob); i++ {
		switch {
		case glob[i] == '{':
			depth++
			b.WriteString("(?:")
		case glob[i] == '}' && depth > 0:
			depth--
			b.WriteString(")")
		case glob[i] == ',' && depth > 0:
			b.WriteString("|")
		case strings.HasPrefix(glob[i:], "**"):
			b.WriteString(".*")
			i++
		case glob[i] == '*':
			b.WriteString(`[^.\[\]]*`)
		default:
			b.WriteString(regexp.QuoteMeta(glob[i : i+1]))
		}
	}
	return b.String() + strings.Repeat(")", depth)
}

// explain returns the first row that explains leaf l of pair; nil when none does.
func (r *Reasons) explain(pair string, l Leaf, fixture, placed any) *Reason {
	if r == nil {
		return nil
	}
	for i := range r.Rows {
		row := &r.Rows[i]
		if len(row.Pairs) > 0 && !slices.Contains(row.Pairs, pair) {
			continue
		}
		if len(row.Status) > 0 && !slices.Contains(row.Status, l.Status) {
			continue
		}
		if !row.path.MatchString(l.Path) {
			continue
		}
		if row.fixture != nil && (!l.inFixture || !row.fixture.MatchString(render(fixture))) {
			continue
		}
		if row.placed != nil && (!l.inPlaced || !row.placed.MatchString(render(placed))) {
			continue
		}
		return row
	}
	return nil
}
