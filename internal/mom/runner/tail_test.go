package runner

import (
	"strings"
	"testing"
)

func TestTailBuffer(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   string
	}{
		{"empty", nil, ""},
		{"under the limit", []string{"ab", "cd"}, "abcd"},
		{"exactly the limit", []string{"abcdefgh"}, "abcdefgh"},
		{"one large write", []string{"0123456789ab"}, "[4 earlier bytes dropped]\n456789ab"},
		{"many small writes", []string{"012", "345", "678", "9ab", "cde"}, "[7 earlier bytes dropped]\n789abcde"},
		{"small after large", []string{"0123456789ab", "cd"}, "[6 earlier bytes dropped]\n6789abcd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newTailBuffer(8)
			for _, w := range tt.writes {
				if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				if len(b.buf) > 16 {
					t.Fatalf("buffer grew to %d bytes", len(b.buf))
				}
			}
			if got := b.String(); got != tt.want {
				t.Errorf("String = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBoundedBuffer(t *testing.T) {
	b := &boundedBuffer{max: 5}
	for _, w := range []string{"abc", "def", "ghi"} {
		if n, err := b.Write([]byte(w)); n != len(w) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	got, overflow := b.Bytes()
	if string(got) != "abcde" || !overflow {
		t.Errorf("Bytes = %q, %v", got, overflow)
	}
}

func TestLastLine(t *testing.T) {
	for in, want := range map[string]string{
		"":                       "",
		"one\n":                  "one",
		"one\ntwo\n\n":           "two",
		strings.Repeat("x", 600): strings.Repeat("x", 512) + "…",
	} {
		if got := lastLine(in); got != want {
			t.Errorf("lastLine(%.20q) = %.20q, want %.20q", in, got, want)
		}
	}
}
