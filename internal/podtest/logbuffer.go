package podtest

import (
	"bytes"
	"strings"
	"sync"
)

// LogBuffer collects what several goroutines write (a logger, a child
// process's output) for a test to read while they still write.
type LogBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LogBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns everything written so far.
func (b *LogBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Count returns how many times s was written so far.
func (b *LogBuffer) Count(s string) int { return strings.Count(b.String(), s) }

// Lines returns the log lines (slog's text form) whose message is msg.
func (b *LogBuffer) Lines(msg string) []string {
	var out []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, `msg="`+msg+`"`) || strings.Contains(l, "msg="+msg+" ") {
			out = append(out, l)
		}
	}
	return out
}
