package contract

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// RefusedDelete is a Delete of a namespaced object that an operator's controller issued and
// that the contract's manifest client refused: its DeleteOptions carry no namespace, so the
// request never matches the object (spec/mom-format.md §2.5) and no Delete mutation is
// recorded. The refusal reaches the controller as an error, which controller-results.yaml
// holds when the controller returns it, or a condition of its operator's status when it
// reports it there; ParseRefusedDeletes finds it in either message.
type RefusedDelete struct {
	// Controller is the controller whose error message held the refusal.
	Controller string
	// Identity is the object the controller tried to delete: group, resource, namespace and
	// name. Version is empty: the message does not say it.
	Identity Identity
}

// The refusal, as client-go formats the manifest client's HTTP 500 for a Delete
// (apierrors.NewGenericServerResponse): the server's message quoted (%q), then the verb, the
// resource (`resource.group` for a group resource) and the name.
const (
	refusalHead = `an error on the server ("request namespace \"`
	refusalMid  = `\" does not equal body namespace \"\"") has prevented the request from succeeding (delete `
)

// Bounds on what ParseRefusedDeletes reads of untrusted operator output.
const (
	// MaxRefusalMessageSize is how much of one error message is searched for refusals.
	MaxRefusalMessageSize = 1 << 20
	// MaxRefusedDeletes is how many refusals one controller-results document yields at most.
	MaxRefusedDeletes = 1024
)

// ParseRefusedDeletes returns every Delete refusal in message, an error message of the named
// controller, in the order they appear. It accepts only the exact form client-go gives the
// refusal, alone or among other errors (library-go's aggregates join them with ", " inside
// brackets, or with newlines; a wrapper may put text and a space before one):
//
//	an error on the server ("request namespace \"NS\" does not equal body namespace \"\"") has prevented the request from succeeding (delete RESOURCE[.GROUP] NAME)
//
// Anything else, a refusal of another verb or one whose namespace, resource, group or name is
// not a valid Kubernetes name among them, is ignored. It reads the first
// MaxRefusalMessageSize bytes of message, in time linear in their length, and returns at most
// MaxRefusedDeletes refusals.
func ParseRefusedDeletes(controller, message string) []RefusedDelete {
	return appendRefusedDeletes(nil, controller, message)
}

// RefusedDeletes returns the Delete refusals in the error messages of every controller of r
// (ParseRefusedDeletes), in the document's order, each once, at most MaxRefusedDeletes. A nil
// document has none.
func (r *ControllerResults) RefusedDeletes() []RefusedDelete {
	if r == nil {
		return nil
	}
	var out []RefusedDelete
	for _, c := range r.ControllerResults {
		for _, e := range c.Errors {
			out = appendRefusedDeletes(out, c.ControllerName, e.Message)
			if len(out) >= MaxRefusedDeletes {
				return dedupRefusedDeletes(out[:MaxRefusedDeletes])
			}
		}
	}
	return dedupRefusedDeletes(out)
}

// dedupRefusedDeletes keeps the first refusal of each object: a controller that retried, or
// two that tried, delete it once.
func dedupRefusedDeletes(in []RefusedDelete) []RefusedDelete {
	seen := make(map[Key]bool, len(in))
	out := in[:0]
	for _, d := range in {
		if k := d.Identity.Key(); !seen[k] {
			seen[k] = true
			out = append(out, d)
		}
	}
	return out
}

func appendRefusedDeletes(out []RefusedDelete, controller, message string) []RefusedDelete {
	if len(message) > MaxRefusalMessageSize {
		message = message[:MaxRefusalMessageSize]
	}
	for pos := 0; len(out) < MaxRefusedDeletes; {
		i := strings.Index(message[pos:], refusalHead)
		if i < 0 {
			break
		}
		start := pos + i
		pos = start + len(refusalHead)
		if !refusalStarts(message, start) {
			continue
		}
		id, end, ok := parseRefusal(message[pos:])
		if !ok {
			continue
		}
		pos += end
		out = append(out, RefusedDelete{Controller: controller, Identity: id})
	}
	return out
}

// refusalStarts reports whether a refusal may start at i: at the start of the message, a
// line, an aggregate ("[") or after a space (", " between errors, "wrapper: ").
func refusalStarts(message string, i int) bool {
	if i == 0 {
		return true
	}
	switch message[i-1] {
	case '\n', '[', ' ':
		return true
	}
	return false
}

// refusalEnds reports whether a refusal may end where rest begins: at the end of the message,
// a line, an aggregate ("]"), or before ", " between errors or a space (a wrapper's suffix,
// such as library-go's "(check the ...)").
func refusalEnds(rest string) bool {
	if rest == "" {
		return true
	}
	switch rest[0] {
	case '\n', ']', ',', ' ':
		return true
	}
	return false
}

// parseRefusal reads a refusal after its head: `NS\" ... (delete RESOURCE[.GROUP] NAME)`. It
// returns the identity and how much of s the refusal took. Each field is bounded by the
// longest valid Kubernetes name, so a failed parse reads a bounded prefix of s.
func parseRefusal(s string) (Identity, int, bool) {
	ns, n, ok := token(s, validation.DNS1123LabelMaxLength, '\\')
	if !ok || len(validation.IsDNS1123Label(ns)) != 0 {
		return Identity{}, 0, false
	}
	off := n
	if !strings.HasPrefix(s[off:], refusalMid) {
		return Identity{}, 0, false
	}
	off += len(refusalMid)
	// resource.group: a resource is a DNS label, a group a DNS subdomain.
	gr, n, ok := token(s[off:], validation.DNS1123LabelMaxLength+1+validation.DNS1123SubdomainMaxLength, ' ')
	if !ok {
		return Identity{}, 0, false
	}
	off += n + 1
	resource, group, _ := strings.Cut(gr, ".")
	if len(validation.IsDNS1123Label(resource)) != 0 || strings.Contains(gr, ".") && len(validation.IsDNS1123Subdomain(group)) != 0 {
		return Identity{}, 0, false
	}
	name, n, ok := token(s[off:], validation.DNS1123SubdomainMaxLength, ')')
	if !ok || len(validation.IsDNS1123Subdomain(name)) != 0 {
		return Identity{}, 0, false
	}
	off += n + 1
	if !refusalEnds(s[off:]) {
		return Identity{}, 0, false
	}
	return Identity{Group: group, Resource: resource, Namespace: ns, Name: name}, off, true
}

// token returns the text of s before stop when it is at most max bytes long and non-empty,
// and its length.
func token(s string, max int, stop byte) (string, int, bool) {
	if len(s) > max+1 {
		s = s[:max+1]
	}
	i := strings.IndexByte(s, stop)
	if i <= 0 {
		return "", 0, false
	}
	return s[:i], i, true
}
