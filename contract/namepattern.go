package contract

import (
	"errors"
	"fmt"
	"strings"
)

// NameWildcard is the one wildcard of a name pattern (see MatchName).
const NameWildcard = "*"

// nameSeparators end a name segment: a wildcard never matches across them.
const nameSeparators = "-."

// IsNamePattern reports whether name is a pattern, not an exact name: it holds a '*'.
func IsNamePattern(name string) bool { return strings.Contains(name, NameWildcard) }

// ValidateNamePattern checks a name pattern of an exactResources entry, topolayer's
// extension of the contract for operators that write indexed families of objects (CAO's
// v4-0-config-user-idp-0-file-data, v4-0-config-user-idp-1-file-data, ...): each '*'
// stands for one or more characters within one name segment (never '-' or '.'), as in
// v4-0-config-user-idp-*-file-data. Two wildcards side by side, glob syntax other than
// '*' ('?', '[', ']', '\') and a pattern without a literal character are refused. An exact
// name (no '*') is valid.
func ValidateNamePattern(pattern string) error {
	if !IsNamePattern(pattern) {
		return nil
	}
	if strings.Contains(pattern, NameWildcard+NameWildcard) {
		return fmt.Errorf("name pattern %q: two '*' side by side: one '*' already matches a whole segment", pattern)
	}
	if i := strings.IndexAny(pattern, `?[]\`); i >= 0 {
		return fmt.Errorf("name pattern %q: %q is not supported: '*' is the only wildcard", pattern, pattern[i])
	}
	if strings.Trim(pattern, NameWildcard+nameSeparators) == "" {
		return fmt.Errorf("name pattern %q: no literal part: a pattern names a family of objects, not every object", pattern)
	}
	return nil
}

// MatchName reports whether name matches pattern: equal when pattern holds no '*'; else
// each '*' matches one or more characters of one name segment, none of them '-' or '.'
// (so v4-0-config-user-idp-*-file-data matches v4-0-config-user-idp-12-file-data but
// neither v4-0-config-user-idp--file-data nor v4-0-config-user-idp-1-2-file-data).
func MatchName(pattern, name string) bool {
	if !IsNamePattern(pattern) {
		return pattern == name
	}
	// at[j] says whether the pattern read so far matches name[:j]; a '*' extends a match
	// ending just before it, or one it extends already, by one character of a segment.
	at := make([]bool, len(name)+1)
	at[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(name)+1)
		for j := 1; j <= len(name); j++ {
			c := name[j-1]
			if pattern[i] == '*' {
				next[j] = (at[j-1] || next[j-1]) && !strings.ContainsRune(nameSeparators, rune(c))
			} else {
				next[j] = at[j-1] && pattern[i] == c
			}
		}
		at = next
	}
	return at[len(name)]
}

// validateNoWildcard refuses a '*' in a field that takes no pattern.
func validateNoWildcard(field, value string) error {
	if IsNamePattern(value) {
		return fieldError(field, errors.New("'*' is allowed only in the name of an exactResources entry"))
	}
	return nil
}

// NameMatchedBy returns a name that pattern matches (each '*' read as "0"): where a
// pattern's objects are placed is where that name is.
func NameMatchedBy(pattern string) string {
	return strings.ReplaceAll(pattern, NameWildcard, "0")
}
