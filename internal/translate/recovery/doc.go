// Package recovery recovers the Deletes an operator made that the contract cannot record
// (Rule): it finds the refusals in controller-results.yaml and in the status conditions the
// operator applies, and turns each into the Delete mutation the operator would have recorded,
// which the engine then places like any other.
//
//	var log recovery.Log
//	for _, m := range out.Mutations {
//		log.Note(&m, m.Identity(), m.Object)
//	}
//	for _, d := range log.Refusals(out.ControllerResults) {
//		m, provenance, why := recovery.Delete(d, discovery, declared, nil)
//		// place m, or drop it for why
//	}
package recovery
