package podspec

import (
	"bytes"
	"time"
)

// criTimeLayout parses the CRI log timestamps, whatever digits of the
// fraction the runtime wrote.
const criTimeLayout = "2006-01-02T15:04:05.999999999Z07:00"

// LogTailMessage is the termination message taken from the end of a CRI
// log: the content of its last MaxLogTailLines lines, both streams, with
// partial lines joined to the next, cut to its last MaxLogTailMessage
// bytes. window is the end of the file; fromStart says it is the whole
// file. Without it, the window's first line may be cut and is left out.
// A last line the runtime has not finished (no newline) is left out too.
//
// enough reports that no earlier part of the file could change the
// message: the caller grows the window until it is.
func LogTailMessage(window []byte, fromStart bool) (msg string, enough bool) {
	end := bytes.LastIndexByte(window, '\n')
	if end < 0 {
		return "", fromStart
	}
	body := window[:end+1]
	if !fromStart {
		body = body[bytes.IndexByte(body, '\n')+1:]
	}
	// Walk the lines from the last one back, keeping contents until the
	// line or byte limit is reached.
	var parts [][]byte
	size, lines := 0, 0
	for len(body) > 0 && lines < MaxLogTailLines && size < MaxLogTailMessage {
		i := bytes.LastIndexByte(body[:len(body)-1], '\n')
		line := body[i+1:]
		body = body[:i+1]
		lines++
		if content, ok := criLogContent(line); ok {
			parts = append(parts, content)
			size += len(content)
		}
	}
	enough = fromStart || lines == MaxLogTailLines || size >= MaxLogTailMessage
	out := make([]byte, 0, min(size, MaxLogTailMessage))
	skip := max(size-MaxLogTailMessage, 0)
	for i := len(parts) - 1; i >= 0; i-- {
		p := parts[i]
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		out = append(out, p[skip:]...)
		skip = 0
	}
	return string(out), enough
}

// criLogContent parses one CRI log line, newline included:
//
//	2016-10-06T00:17:09.669794202Z stdout F log content
//
// and returns its content: with the newline for a full line (tag F), and
// without it for a partial one (tag P), which the next line continues.
// ok is false for a line that is not in this format.
func criLogContent(line []byte) (content []byte, ok bool) {
	ts, rest, found := bytes.Cut(line, []byte{' '})
	if !found {
		return nil, false
	}
	if _, err := time.Parse(criTimeLayout, string(ts)); err != nil {
		return nil, false
	}
	stream, rest, found := bytes.Cut(rest, []byte{' '})
	if !found || (string(stream) != "stdout" && string(stream) != "stderr") {
		return nil, false
	}
	tags, content, found := bytes.Cut(rest, []byte{' '})
	if !found {
		return nil, false
	}
	// Tags are ':'-separated; the first says full or partial.
	tag, _, _ := bytes.Cut(tags, []byte{':'})
	if string(tag) == "P" {
		content = bytes.TrimSuffix(content, []byte{'\n'})
	}
	return content, true
}
