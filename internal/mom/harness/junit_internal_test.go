package harness

import "testing"

func TestFailureMessage(t *testing.T) {
	for name, tc := range map[string]struct {
		problems []string
		want     string
	}{
		"one line": {[]string{"the operator exited with status 2"}, "the operator exited with status 2"},
		"a diff": {[]string{"controller-results.yaml differs (parsed):\n    --- expected\n    +++ actual\n    @@ -2 +2 @@\n       {\n    -      \"status\": \"Failed\"\n    +      \"status\": \"Succeeded\"\n"},
			`controller-results.yaml differs (parsed): -"status": "Failed" +"status": "Succeeded"`},
		"more than three": {[]string{"a", "b", "c", "d", "e"}, "a; b; c; and 2 more"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := failureMessage(tc.problems); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
