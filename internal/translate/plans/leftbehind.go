package plans

import (
	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/routing"
)

// LeftBehind returns the objects of placed (the standalone identities that the operator's
// earlier plans applied) that this plan leaves behind: each is a member of a family that one
// of decls names by a name pattern (contract.MatchName), no entry of the plan writes or
// deletes it, and the plan writes another member of the same family. An operator that
// rewrites a family whenever it writes any of it (CAO's identity-provider copies
// v4-0-config-user-idp-N-*) has stopped writing such an object: what it copied was removed.
// The contract's manifest client refuses the Delete of a namespaced object (spec §2.5), so
// the operator cannot record one; a Delete it tried is recovered from its controller's error
// (RuleRecoveredDelete) when it saw the object, and an object such a Delete deletes is not
// left behind. One that is not placed (dropped) deletes nothing, and does not hide the
// object. The result keeps placed's order.
func (p *Plan) LeftBehind(placed []contract.Identity, decls ...*contract.OutputResources) []contract.Identity {
	inPlan := map[contract.Key]bool{}
	for _, e := range p.Entries {
		if e.Provenance != "" && e.Disposition != routing.Apply {
			continue // a recovered Delete that deletes nothing
		}
		inPlan[e.Source.Key()] = true
	}
	var families []contract.ExactResourceID
	for _, d := range decls {
		if d == nil {
			continue
		}
		for _, c := range contract.Classes()[:3] {
			for _, e := range d.ForClass(c).ExactResources {
				if contract.IsNamePattern(e.Name) {
					families = append(families, e)
				}
			}
		}
	}
	member := func(f contract.ExactResourceID, id contract.Identity) bool {
		return id.GenerateName == "" && f.Group == id.Group && f.Resource == id.Resource && f.Namespace == id.Namespace && contract.MatchName(f.Name, id.Name)
	}
	var out []contract.Identity
	for _, id := range placed {
		if inPlan[id.Key()] {
			continue
		}
		for _, f := range families {
			if !member(f, id) {
				continue
			}
			written := false
			for _, e := range p.Entries {
				if e.Action != contract.ActionDelete && member(f, e.Source) {
					written = true
					break
				}
			}
			if written {
				out = append(out, id)
				break
			}
		}
	}
	return out
}
