package runner

import "testing"

// FuzzParseEndpoint checks that ParseEndpoint never panics and that what it accepts reads
// back the same from its String.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"idp.example.com:443", "127.0.0.1:8443", "[::1]:8443", "10.0.0.0/24:636", "[fd00::/64]:443", "*:443", "0.0.0.0/0:1", "a:0", "[::ffff:10.0.0.1]:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseEndpoint(s)
		if err != nil {
			return
		}
		again, err := ParseEndpoint(e.String())
		if err != nil || again != e {
			t.Fatalf("ParseEndpoint(%q) = %v; its String %q reads back as %v, %v", s, e, e.String(), again, err)
		}
	})
}
