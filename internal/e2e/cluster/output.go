package cluster

import (
	"bytes"
	"io"
	"sync"
)

// prefixWriter writes whole lines to w, each prefixed, under a lock that writers sharing w
// share, so that the output of concurrent processes does not interleave within a line.
type prefixWriter struct {
	mu     *sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		// A failed write drops the line: an error would stop the copying of the process's
		// output, and the process would block once the pipe is full.
		_, _ = io.WriteString(p.w, p.prefix+string(p.buf[:i+1]))
		p.buf = p.buf[i+1:]
	}
	return len(b), nil
}

// flush writes a last unterminated line, if any.
func (p *prefixWriter) flush() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.buf) > 0 {
		_, _ = io.WriteString(p.w, p.prefix+string(p.buf)+"\n")
		p.buf = nil
	}
}
