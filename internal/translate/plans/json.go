package plans

import (
	"bufio"
	"encoding/json"
	"io"
)

// WriteJSON writes p as json.MarshalIndent(p, "", "  ") does, and a newline, one entry
// at a time: the document of a large plan is never held whole.
func WriteJSON(w io.Writer, p *Plan) error {
	n := len(p.Entries)
	if p.Entries == nil {
		n = -1
	}
	return WriteEntries(w, p, n, func(i int) ([]byte, error) { return EntryJSON(&p.Entries[i]) })
}

// WriteEntries writes plan.json with n entries, entry(i) the i-th's form (EntryJSON), and
// the rest of the document from p; n < 0 writes "entries": null.
func WriteEntries(w io.Writer, p *Plan, n int, entry func(i int) ([]byte, error)) error {
	bw := bufio.NewWriter(w)
	field := func(name string, v any, indent string) error {
		js, err := json.MarshalIndent(v, indent, "  ")
		if err != nil {
			return err
		}
		if _, err := bw.WriteString(indent + `"` + name + `": `); err != nil {
			return err
		}
		_, err = bw.Write(js)
		return err
	}
	if _, err := bw.WriteString("{\n"); err != nil {
		return err
	}
	if err := field("topology", p.Topology, "  "); err != nil {
		return err
	}
	if n < 0 {
		if _, err := bw.WriteString(",\n  \"entries\": null"); err != nil {
			return err
		}
	} else {
		if _, err := bw.WriteString(",\n  \"entries\": ["); err != nil {
			return err
		}
		for i := range n {
			js, err := entry(i)
			if err != nil {
				return err
			}
			sep := ",\n    "
			if i == 0 {
				sep = "\n    "
			}
			if _, err := bw.WriteString(sep); err != nil {
				return err
			}
			if _, err := bw.Write(js); err != nil {
				return err
			}
		}
		end := "\n  ]"
		if n == 0 {
			end = "]"
		}
		if _, err := bw.WriteString(end); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString(",\n"); err != nil {
		return err
	}
	if err := field("summary", p.Summary, "  "); err != nil {
		return err
	}
	if len(p.GuestIdentities) > 0 {
		if _, err := bw.WriteString(",\n"); err != nil {
			return err
		}
		if err := field("guestIdentities", p.GuestIdentities, "  "); err != nil {
			return err
		}
	}
	if _, err := bw.WriteString("\n}\n"); err != nil {
		return err
	}
	return bw.Flush()
}

// EntryJSON is an entry's form in plan.json (WriteJSON).
func EntryJSON(e *Entry) ([]byte, error) { return json.MarshalIndent(e, "    ", "  ") }
