package manager

import (
	"strconv"
	"testing"
)

func TestOwnWrites(t *testing.T) {
	const cr = "management/operator.openshift.io.shadow.topolayer.dev/authentications/hcp/cluster"
	w := newOwnWrites()
	// Run 1 writes the operator CR 24 times (one status write per controller), run 2 once.
	for i := range 24 {
		w.add(1, cr, strconv.Itoa(100+i))
	}
	w.add(2, cr, "200")
	tests := []struct {
		name string
		rv   string
		want bool
	}{
		{"the first of 24 writes of the previous run", "100", true},
		{"the last of them", "123", true},
		{"the current run's write", "200", true},
		{"someone else's change", "124", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := w.has(cr, tc.rv); got != tc.want {
				t.Errorf("has(%s) = %v, want %v", tc.rv, got, tc.want)
			}
		})
	}
	if w.has("management/other", "100") {
		t.Error("another object's change counts as the operator's")
	}
	// Run 3 forgets run 1's writes: their events arrived long ago.
	w.add(3, cr, "300")
	if w.has(cr, "100") {
		t.Error("run 1's writes are still remembered after run 3")
	}
	if !w.has(cr, "200") || !w.has(cr, "300") {
		t.Error("the last two runs' writes are forgotten")
	}
}
