package yamlnode

import "strings"

// PointerEscape escapes one JSON pointer segment (RFC 6901): '~' as "~0", '/' as "~1".
func PointerEscape(segment string) string {
	if !strings.ContainsAny(segment, "~/") {
		return segment
	}
	return strings.ReplaceAll(strings.ReplaceAll(segment, "~", "~0"), "/", "~1")
}

// PointerSegments splits a JSON pointer into its unescaped segments; "" is the whole document.
func PointerSegments(pointer string) []string {
	if pointer == "" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for i, p := range parts {
		if strings.Contains(p, "~") {
			parts[i] = strings.ReplaceAll(strings.ReplaceAll(p, "~1", "/"), "~0", "~")
		}
	}
	return parts
}

// Pointer builds a JSON pointer from path segments.
func Pointer(path []string) string {
	var b strings.Builder
	for _, s := range path {
		b.WriteByte('/')
		b.WriteString(PointerEscape(s))
	}
	return b.String()
}
