package main

import (
	"strings"
	"testing"
)

// checkErr fails the test unless err is what want describes: no error when want is empty,
// otherwise an error whose message contains every string of want (flags, files, fields).
func checkErr(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want one that mentions %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}
