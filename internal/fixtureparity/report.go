package fixtureparity

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/topolayer/topolayer/internal/translate/parity"
	"github.com/topolayer/topolayer/routing"
)

// Status is how one leaf of a pair compares.
type Status string

// The statuses of a leaf.
const (
	// Equal: both sides have the leaf, with the same value.
	Equal Status = "equal"
	// Missing: only the fixture has it.
	Missing Status = "missing"
	// Extra: only the placed object has it.
	Extra Status = "extra"
	// Different: both have it, with other values.
	Different Status = "different"
)

// Leaf is one leaf field of a pair.
type Leaf struct {
	// Path is the leaf's path (see Flatten), data keys under their fixture names.
	Path string `json:"path"`
	// Status is how it compares.
	Status Status `json:"status"`
	// Fixture and Placed are the values, printed ("(absent)" for a side without it).
	Fixture string `json:"fixture"`
	Placed  string `json:"placed"`
	// Reason is why a leaf that is not equal may differ (the reasons table's row name and
	// words); empty when nothing explains it.
	Reason string `json:"reason,omitempty"`

	inFixture, inPlaced bool
}

// Explained reports whether the leaf is equal or has a reason.
func (l Leaf) Explained() bool { return l.Status == Equal || l.Reason != "" }

// Counts counts the leaves of a pair, a variant or a report.
type Counts struct {
	// Leaves is every leaf of either side; FixtureLeaves those the fixture has.
	Leaves        int `json:"leaves"`
	FixtureLeaves int `json:"fixtureLeaves"`
	// Equal leaves, and Explained ones (not equal, with a reason).
	Equal     int `json:"equal"`
	Explained int `json:"explained"`
	// Missing, Extra and Different count the unexplained leaves of each status.
	Missing   int `json:"missing"`
	Extra     int `json:"extra"`
	Different int `json:"different"`
}

// Unexplained is Missing + Extra + Different.
func (c Counts) Unexplained() int { return c.Missing + c.Extra + c.Different }

// EqualPercent is the share of the fixture's leaves that are equal, in percent.
func (c Counts) EqualPercent() float64 {
	if c.FixtureLeaves == 0 {
		return 0
	}
	return 100 * float64(c.Equal) / float64(c.FixtureLeaves)
}

// String is "144 fixture leaves, 200 in all: 23 equal, 50 explained, 127 unexplained (60 missing, 40 extra, 27 different)".
func (c Counts) String() string {
	return fmt.Sprintf("%d fixture leaves, %d in all: %d equal, %d explained, %d unexplained (%d missing, %d extra, %d different)",
		c.FixtureLeaves, c.Leaves, c.Equal, c.Explained, c.Unexplained(), c.Missing, c.Extra, c.Different)
}

func (c *Counts) add(o Counts) {
	c.Leaves += o.Leaves
	c.FixtureLeaves += o.FixtureLeaves
	c.Equal += o.Equal
	c.Explained += o.Explained
	c.Missing += o.Missing
	c.Extra += o.Extra
	c.Different += o.Different
}

func (c *Counts) count(l Leaf) {
	c.Leaves++
	if l.inFixture {
		c.FixtureLeaves++
	}
	switch {
	case l.Status == Equal:
		c.Equal++
	case l.Reason != "":
		c.Explained++
	case l.Status == Missing:
		c.Missing++
	case l.Status == Extra:
		c.Extra++
	default:
		c.Different++
	}
}

// ObjectReport compares one pair.
type ObjectReport struct {
	// Pair is the pair's name; Fixture the fixture object ("Deployment oauth-openshift",
	// with its file), Placed the placed object ("management: apps/deployments ns/name"),
	// empty when the operator wrote none.
	Pair        string `json:"pair"`
	Fixture     string `json:"fixture"`
	FixtureFile string `json:"fixtureFile"`
	Placed      string `json:"placed,omitempty"`
	// Leaves are sorted by path.
	Leaves []Leaf `json:"leaves"`
	Counts Counts `json:"counts"`
}

// VariantReport compares one variant's fixtures with the placed objects.
type VariantReport struct {
	// Variant names the variant (the fixtures' directory).
	Variant string `json:"variant"`
	// Objects are in the order of the pairs; a pair whose fixture object the variant lacks
	// is left out.
	Objects []ObjectReport `json:"objects"`
	// Unpaired lists the fixture objects no pair names ("ControlPlaneComponent oauth-openshift").
	Unpaired []string `json:"unpaired,omitempty"`
	// Counts sums the objects'.
	Counts Counts `json:"counts"`
	// DeploymentEqual is the share, in percent, of the fixture Deployment's leaves that are
	// equal (0 without one).
	DeploymentEqual float64 `json:"deploymentEqualPercent"`
}

// Report is the comparison of one or more variants.
type Report struct {
	Variants []VariantReport `json:"variants"`
	// Counts sums the variants'.
	Counts Counts `json:"counts"`
}

// ErrUnexplained is wrapped by Report.Err when some leaf is neither equal nor explained.
var ErrUnexplained = errors.New("unexplained differences from HyperShift's fixtures")

// Err returns nil when every leaf is equal or explained, and otherwise an error wrapping
// ErrUnexplained with the count per variant.
func (r *Report) Err() error {
	var parts []string
	for _, v := range r.Variants {
		if n := v.Counts.Unexplained(); n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d (%d missing, %d extra, %d different)", v.Variant, n, v.Counts.Missing, v.Counts.Extra, v.Counts.Different))
		}
	}
	if len(parts) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrUnexplained, strings.Join(parts, "; "))
}

// NewReport sums variant reports into one.
func NewReport(variants ...VariantReport) *Report {
	r := &Report{Variants: variants}
	for _, v := range variants {
		r.Counts.add(v.Counts)
	}
	return r
}

// Compare compares one variant's fixtures with the placed objects (final states on the
// management cluster, matched by their standalone identity), pair by pair.
func Compare(variant string, fixtures []Fixture, placed []parity.Object, pairs []Pair, reasons *Reasons) VariantReport {
	v := VariantReport{Variant: variant, Objects: []ObjectReport{}}
	used := map[int]bool{}
	documents := documentPaths(fixtures, placed, pairs)
	for _, p := range pairs {
		fi := slices.IndexFunc(fixtures, func(f Fixture) bool { return f.Kind() == p.Kind && f.Name() == p.FixtureName })
		if fi < 0 {
			continue
		}
		used[fi] = true
		o := comparePair(p, fixtures[fi], placedObject(placed, p), pairs, placed, documents, reasons)
		v.Counts.add(o.Counts)
		if p.Kind == "Deployment" {
			v.DeploymentEqual = o.Counts.EqualPercent()
		}
		v.Objects = append(v.Objects, o)
	}
	for i, f := range fixtures {
		if !used[i] {
			v.Unpaired = append(v.Unpaired, f.Kind()+" "+f.Name())
		}
	}
	return v
}

// comparePair flattens both sides of one pair and classifies every leaf. A Deployment's
// volumes are compared with the fixture volume each stands for (pairVolumes; documents are
// the paths the paired configuration documents name). Without a placed object no reason
// applies: every leaf of the fixture is missing, unexplained.
func comparePair(p Pair, f Fixture, obj *parity.Object, pairs []Pair, placed []parity.Object, documents [2]map[string]string, reasons *Reasons) ObjectReport {
	o := ObjectReport{Pair: p.Name, Fixture: f.Kind() + " " + f.Name(), FixtureFile: f.File, Leaves: []Leaf{}}
	fixtureLeaves := Flatten(withDocuments(f.Object, p, false))
	placedLeaves := map[string]any{}
	names := pairedNames(pairs, placed)
	if obj != nil {
		o.Placed = obj.Cluster + ": " + obj.Identity.String()
		placedLeaves = Flatten(withDocuments(obj.Body, p, true))
		if p.Kind == "Deployment" {
			placedLeaves = renameVolumes(placedLeaves, pairVolumes(readVolumeSide(f.Object), readVolumeSide(obj.Body), names, documents))
		}
	}
	for _, path := range slices.Sorted(maps.Keys(union(fixtureLeaves, placedLeaves))) {
		fv, inF := fixtureLeaves[path]
		pv, inP := placedLeaves[path]
		l := Leaf{Path: path, Fixture: display(fv, inF), Placed: display(pv, inP), inFixture: inF, inPlaced: inP}
		switch {
		case !inP:
			l.Status = Missing
		case !inF:
			l.Status = Extra
		case l.Fixture == l.Placed:
			l.Status = Equal
		default:
			l.Status = Different
		}
		if l.Status != Equal && obj != nil {
			if path == "metadata.name" && obj != nil && fv == f.Name() && pv == obj.Identity.Name {
				l.Reason = "paired-name: the pair's own names (topolayer names the operator's " + p.Placed.Namespace + "/" + p.Placed.Name + " " + obj.Identity.Name + " in the HCP namespace)"
			} else if row := reasons.explain(p.Name, l, fv, pv); row != nil {
				l.Reason = row.Name + ": " + row.Reason
			} else if l.Status == Different && names[render(fv)] != "" && names[render(fv)] == render(pv) {
				l.Reason = "paired-name: names the paired object (HyperShift's " + render(fv) + " is the operator's, placed as " + render(pv) + ")"
			}
		}
		o.Counts.count(l)
		o.Leaves = append(o.Leaves, l)
	}
	return o
}

// pairedNames maps the name of each fixture ConfigMap and Secret to the name its placed
// object has on the management cluster: a volume or reference naming one names the other. A
// fixture name that two such pairs with other placed names share is left out: a reference by
// that name could be to either.
func pairedNames(pairs []Pair, placed []parity.Object) map[string]string {
	out := map[string]string{}
	ambiguous := map[string]bool{}
	for _, p := range pairs {
		if p.Kind != "ConfigMap" && p.Kind != "Secret" {
			continue
		}
		for _, o := range placed {
			s := o.Source
			if o.Cluster != routing.ClusterManagement || s.Group != p.Placed.Group || s.Resource != p.Placed.Resource || s.Namespace != p.Placed.Namespace || s.Name != p.Placed.Name {
				continue
			}
			if prev, ok := out[p.FixtureName]; ok && prev != o.Identity.Name {
				ambiguous[p.FixtureName] = true
			}
			out[p.FixtureName] = o.Identity.Name
		}
	}
	for n := range ambiguous {
		delete(out, n)
	}
	return out
}

// withDocuments returns a copy of obj whose data keys the pair names are under their fixture
// names and parsed when they hold a document; with OnlyKeys, the placed side keeps only them.
func withDocuments(obj map[string]any, p Pair, placedSide bool) map[string]any {
	data, ok := obj["data"].(map[string]any)
	if !ok || len(p.Keys) == 0 {
		return obj
	}
	out := maps.Clone(obj)
	nd := map[string]any{}
	if !(placedSide && p.OnlyKeys) {
		maps.Copy(nd, data)
	}
	for _, k := range p.Keys {
		from := k.Fixture
		if placedSide {
			from = k.Placed
		}
		v, ok := data[from]
		if !ok {
			continue
		}
		delete(nd, from)
		if k.Document {
			v = parseDocument(v)
		}
		nd[k.Fixture] = v
	}
	out["data"] = nd
	return out
}

func union(a, b map[string]any) map[string]any {
	out := maps.Clone(a)
	maps.Copy(out, b)
	return out
}
