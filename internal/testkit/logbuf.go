package testkit

import (
	"bytes"
	"sync"
)

// logDumpMax bounds the log shown for a failed test; the end of the log is
// where the failure is.
const logDumpMax = 64 << 10

// logBuffer collects the gateway's log from its concurrent handlers. The
// gateway logs here rather than to t.Log because its goroutines may still
// write after the test function has returned, which t.Log forbids.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Tail is the last max bytes of the log, marked when cut.
func (l *logBuffer) Tail(max int) string {
	s := l.String()
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}
