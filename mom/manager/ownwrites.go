package manager

// ownWrites remembers the resourceVersions an operator's writes left, per object, for the
// runs that can still cause watch events: its last run and the one before (events of one
// run can arrive after the next has started). A change that carries one of them is the
// operator's own, however many times one run wrote the object (the real
// cluster-authentication-operator writes its operator CR's status two dozen times in one
// run, one field manager per controller).
type ownWrites struct {
	// byObject maps an object key (writtenKey) to its resourceVersions and the run that
	// wrote each.
	byObject map[string]map[string]int64
	// last is the newest run recorded.
	last int64
}

func newOwnWrites() *ownWrites { return &ownWrites{byObject: map[string]map[string]int64{}} }

// add records that run wrote the object key at resourceVersion rv. Recording a run
// forgets what runs older than the one before it wrote.
func (w *ownWrites) add(run int64, key, rv string) {
	if run > w.last {
		w.last = run
		w.forget(run - 1)
	}
	rvs := w.byObject[key]
	if rvs == nil {
		rvs = map[string]int64{}
		w.byObject[key] = rvs
	}
	rvs[rv] = run
}

// has reports whether the object key at resourceVersion rv is one of the remembered writes.
func (w *ownWrites) has(key, rv string) bool {
	_, ok := w.byObject[key][rv]
	return ok
}

// forget drops what runs before oldest wrote.
func (w *ownWrites) forget(oldest int64) {
	for key, rvs := range w.byObject {
		for rv, run := range rvs {
			if run < oldest {
				delete(rvs, rv)
			}
		}
		if len(rvs) == 0 {
			delete(w.byObject, key)
		}
	}
}
