package runner

import (
	"strconv"
	"sync"
)

// tailBuffer is an io.Writer that keeps only the last max bytes written to it, so an
// operator's chatter cannot grow the runner's memory.
type tailBuffer struct {
	mu      sync.Mutex
	max     int
	buf     []byte // at most 2*max bytes before compaction
	dropped int64
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

// Write implements io.Writer; it never fails.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) >= t.max {
		t.dropped += int64(len(t.buf) + len(p) - t.max)
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 && len(t.buf) >= 2*t.max {
		t.dropped += int64(over)
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return n, nil
}

// String returns the kept bytes, prefixed with a note of how many were dropped.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, dropped := t.buf, t.dropped
	if over := len(b) - t.max; over > 0 {
		b, dropped = b[over:], dropped+int64(over)
	}
	if dropped == 0 {
		return string(b)
	}
	return "[" + strconv.FormatInt(dropped, 10) + " earlier bytes dropped]\n" + string(b)
}

// boundedBuffer keeps the first max bytes written to it and records whether more came.
type boundedBuffer struct {
	mu       sync.Mutex
	max      int
	buf      []byte
	overflow bool
}

// Write implements io.Writer; it never fails, so the writer is drained.
func (b *boundedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	room := b.max - len(b.buf)
	if len(p) > room {
		b.overflow = true
		b.buf = append(b.buf, p[:max(room, 0)]...)
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// Bytes returns the kept bytes and whether anything was dropped.
func (b *boundedBuffer) Bytes() ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf, b.overflow
}
