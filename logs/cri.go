package logs

import (
	"bytes"
	"errors"
	"fmt"
	"time"
)

// The CRI log format, one entry a line, as containerd and CRI-O write it:
//
//	2016-10-06T00:17:09.669794202Z stdout P log content 1
//	2016-10-06T00:17:09.669794203Z stderr F log content 2
//
// A runtime splits a long line into P(artial) entries ended by an F(ull)
// one; the tag field may carry more after a ':' in later versions.
const (
	// timeIn accepts the runtimes' trimmed nanoseconds (…:09.6697942Z).
	timeIn = "2006-01-02T15:04:05.999999999Z07:00"
	// timeOut is fixed-width so that timestamped output lines up, as
	// `kubectl logs --timestamps` users see from every kubelet.
	timeOut = "2006-01-02T15:04:05.000000000Z07:00"
)

var errMalformed = errors.New("malformed CRI log line")

// entry is one parsed line. content aliases the line it came from.
type entry struct {
	time    time.Time
	partial bool
	// content ends in the line's '\n' for a full entry, so joining
	// entries is concatenation; a partial entry's '\n' is not its own.
	content []byte
}

// parseCRI parses one line, '\n' included if it has one. Every field up
// to the content must be there: a line without a tag field is refused
// (its first content word would otherwise pass for a tag), and any tag
// but P is a full line, so a runtime adding tags keeps working.
func parseCRI(line []byte) (entry, error) {
	var e entry
	ts, rest, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return e, fmt.Errorf("%w: no timestamp", errMalformed)
	}
	t, err := time.Parse(timeIn, string(ts))
	if err != nil {
		return e, fmt.Errorf("%w: timestamp %q", errMalformed, ts)
	}
	stream, rest, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return e, fmt.Errorf("%w: no stream", errMalformed)
	}
	if s := string(stream); s != "stdout" && s != "stderr" {
		return e, fmt.Errorf("%w: stream %q", errMalformed, stream)
	}
	tags, content, ok := bytes.Cut(rest, []byte{' '})
	if !ok {
		return e, fmt.Errorf("%w: no tag", errMalformed)
	}
	first, _, _ := bytes.Cut(tags, []byte{':'})
	e.time = t
	e.partial = len(first) == 1 && first[0] == 'P'
	if e.partial {
		content = bytes.TrimSuffix(content, []byte{'\n'})
	}
	e.content = content
	return e, nil
}

// endsLine reports whether output written after e starts a new line: an
// empty entry counts as one, as the kubelet counts it.
func (e *entry) endsLine() bool {
	return len(e.content) == 0 || e.content[len(e.content)-1] == '\n'
}
