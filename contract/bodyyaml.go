package contract

import (
	"unicode/utf8"

	yamlv2 "go.yaml.in/yaml/v2"
)

// plainYAML writes an object of JSON's plain values (plainJSON) as the contract's writer
// writes bodies, what sigs.k8s.io/yaml.JSONToYAML makes of its JSON, without the JSON: go-yaml
// v2 writes the object directly, as JSONToYAML's second half writes what its first half reads
// back (the same strings, integers, booleans and nulls; a mapping's keys sorted whatever Go
// type holds them). The JSON encoding and its parse were most of a hosted translation's
// writing.
func plainYAML(obj map[string]any) ([]byte, error) { return yamlv2.Marshal(obj) }

// plainJSON reports whether v is made of values that go through JSON and go-yaml v2's
// reading of it unchanged: non-nil maps of string keys and non-nil slices (JSON writes nil
// ones as null), strings that go-yaml reads back as they are (valid UTF-8, without the
// characters JSON writes raw but YAML does not allow), booleans, nil and integers. Floats
// are not: JSON writes 3.0 as 3, which reads back as an integer.
func plainJSON(v any) bool {
	switch t := v.(type) {
	case nil, bool, int64, int:
		return true
	case string:
		return plainString(t)
	case map[string]any:
		if t == nil {
			return false
		}
		for k, e := range t {
			if !plainString(k) || !plainJSON(e) {
				return false
			}
		}
		return true
	case []any:
		if t == nil {
			return false
		}
		for _, e := range t {
			if !plainJSON(e) {
				return false
			}
		}
		return true
	}
	return false
}

// plainString reports whether s is valid UTF-8 without a character that encoding/json
// writes raw and a YAML parser refuses (DEL, the C1 controls, the byte order mark, U+FFFE
// and U+FFFF). encoding/json escapes the C0 controls, U+2028 and U+2029.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x7f {
			return plainRunes(s[i:])
		}
	}
	return true
}

func plainRunes(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if (r >= 0x7f && r <= 0x9f) || r == 0xfeff || r == 0xfffe || r == 0xffff {
			return false
		}
	}
	return true
}
