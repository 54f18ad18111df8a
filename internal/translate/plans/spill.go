package plans

import (
	"fmt"
	"io"
	"slices"

	"github.com/topolayer/topolayer/contract"
)

// Spill holds, out of memory, the plan.json form of the entries a planner settles while it
// adds them, until the plan is written: the planner appends to it and reads back what it
// appended. An *os.File opened for reading and writing is one.
type Spill interface {
	io.Writer
	io.ReaderAt
}

// spillBuffer is how much a SpillWriter writes to a spill at once, and a SpillReader reads
// back at once.
const spillBuffer = 256 << 10

// Spilled is an entry kept in a spill: where its plan.json form is, and what orders it among
// the plan's entries (its mutation's class and path).
type Spilled struct {
	Class contract.Class
	Path  string
	off   int64
	n     int
}

// SpillWriter appends the plan.json form of entries to a spill, a buffer at a time.
type SpillWriter struct {
	to  Spill
	buf []byte
	off int64
}

// NewSpillWriter returns a writer to s.
func NewSpillWriter(s Spill) *SpillWriter { return &SpillWriter{to: s} }

// Add appends the plan.json form of e, of a mutation of class at path, and returns where it
// is.
func (s *SpillWriter) Add(e *Entry, class contract.Class, path string) (Spilled, error) {
	js, err := EntryJSON(e)
	if err != nil {
		return Spilled{}, fmt.Errorf("%s: plan entry: %w", e.SourcePath, err)
	}
	rec := Spilled{Class: class, Path: path, off: s.off + int64(len(s.buf)), n: len(js)}
	s.buf = append(s.buf, js...)
	if len(s.buf) >= spillBuffer {
		return rec, s.Flush()
	}
	return rec, nil
}

// Flush writes what the writer buffered to the spill.
func (s *SpillWriter) Flush() error {
	if len(s.buf) == 0 {
		return nil
	}
	if _, err := s.to.Write(s.buf); err != nil {
		return fmt.Errorf("spill plan entries: %w", err)
	}
	s.off += int64(len(s.buf))
	s.buf = s.buf[:0]
	return nil
}

// SpillReader reads entries back from a spill, a buffer at a time: a plan's order is nearly
// the order they were spilled in.
type SpillReader struct {
	r   io.ReaderAt
	buf []byte
	off int64 // the spill offset of buf[0]
}

// NewSpillReader returns a reader of s.
func NewSpillReader(s io.ReaderAt) *SpillReader { return &SpillReader{r: s} }

// Entry returns the plan.json form of s; the bytes are valid until the next call.
func (r *SpillReader) Entry(s Spilled) ([]byte, error) {
	if s.off < r.off || s.off+int64(s.n) > r.off+int64(len(r.buf)) {
		r.buf = slices.Grow(r.buf[:0], max(spillBuffer, s.n))[:max(spillBuffer, s.n)]
		n, err := r.r.ReadAt(r.buf, s.off)
		if n < s.n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("read spilled plan entry %s: %w", s.Path, err)
		}
		r.buf, r.off = r.buf[:n], s.off
	}
	i := int(s.off - r.off)
	return r.buf[i : i+s.n], nil
}
