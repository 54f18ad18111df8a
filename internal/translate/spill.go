package translate

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/topolayer/topolayer/contract"
	"github.com/topolayer/topolayer/internal/translate/plans"
)

// Spill holds, out of memory, the plan.json form of the entries a Planner settles while it
// adds them, until the plan is written: the planner appends to it and reads back what it
// appended. An *os.File opened for reading and writing is one.
type Spill interface {
	io.Writer
	io.ReaderAt
}

// spillBuffer is how much the planner writes to a spill at once, and reads back at once.
const spillBuffer = 256 << 10

// spilled is an entry the planner keeps in a spill: where its plan.json form is, and what
// orders it among the plan's entries.
type spilled struct {
	class contract.Class
	path  string
	off   int64
	n     int
}

// planOrder orders entries as the source directory does: by class, then by path.
func planOrder(classA contract.Class, pathA string, classB contract.Class, pathB string) int {
	if c := cmp.Compare(slices.Index(contract.Classes(), classA), slices.Index(contract.Classes(), classB)); c != 0 {
		return c
	}
	return cmp.Compare(pathA, pathB)
}

// spillWork writes a settled entry's plan.json form to the spill and forgets the work: the
// plan keeps its place and summary only.
func (p *Planner) spillWork(w *work) {
	js, err := plans.EntryJSON(&w.entry)
	if err != nil {
		p.err = fmt.Errorf("%s: plan entry: %w", w.entry.SourcePath, err)
		return
	}
	p.spilled = append(p.spilled, spilled{class: w.m.Class, path: w.m.Path, off: p.spillOff + int64(len(p.spillBuf)), n: len(js)})
	p.spillBuf = append(p.spillBuf, js...)
	p.spillSummary.Add(w.entry.Disposition)
	if len(p.spillBuf) >= spillBuffer {
		p.flushSpill()
	}
}

// flushSpill writes what the planner buffered to the spill.
func (p *Planner) flushSpill() {
	if len(p.spillBuf) == 0 || p.err != nil {
		return
	}
	if _, err := p.spill.Write(p.spillBuf); err != nil {
		p.err = fmt.Errorf("spill plan entries: %w", err)
		return
	}
	p.spillOff += int64(len(p.spillBuf))
	p.spillBuf = p.spillBuf[:0]
}

// spillReader reads entries back from a spill, a buffer at a time: the plan's order is
// nearly the order they were spilled in.
type spillReader struct {
	r   io.ReaderAt
	buf []byte
	off int64 // the spill offset of buf[0]
}

// entry returns the plan.json form of s; the bytes are valid until the next call.
func (r *spillReader) entry(s spilled) ([]byte, error) {
	if s.off < r.off || s.off+int64(s.n) > r.off+int64(len(r.buf)) {
		r.buf = slices.Grow(r.buf[:0], max(spillBuffer, s.n))[:max(spillBuffer, s.n)]
		n, err := r.r.ReadAt(r.buf, s.off)
		if n < s.n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("read spilled plan entry %s: %w", s.path, err)
		}
		r.buf, r.off = r.buf[:n], s.off
	}
	i := int(s.off - r.off)
	return r.buf[i : i+s.n], nil
}
