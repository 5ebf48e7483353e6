package logs

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseCRI holds the parser to never panicking and to the format's
// invariants, whatever a torn or hostile file holds: an error is
// errMalformed; the content is the line's end; an entry written back in
// the format (as the runtime would) parses to the same entry.
func FuzzParseCRI(f *testing.F) {
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stdout F log content 1\n"))
	f.Add([]byte("2016-10-06T00:17:09.669794202Z stderr P \n"))
	f.Add([]byte("2016-10-06T00:17:09Z stdout P:x:y a b\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := parseCRI(line)
		if err != nil {
			if !errors.Is(err, errMalformed) {
				t.Fatalf("parseCRI(%q): error %v is not errMalformed", line, err)
			}
			return
		}
		// The content is the line's end, less the newline a partial
		// entry does not own.
		rest := line
		if e.partial {
			rest = bytes.TrimSuffix(line, []byte{'\n'})
		}
		if !bytes.HasSuffix(rest, e.content) {
			t.Fatalf("parseCRI(%q) content %q is not the line's end", line, e.content)
		}
		tag := "F"
		if e.partial {
			tag = "P"
		}
		again := append([]byte(e.time.Format(timeOut)+" stderr "+tag+" "), e.content...)
		if e.partial {
			// The newline that ends a partial entry's line is not its
			// content: the runtime writes it after the content.
			again = append(again, '\n')
		}
		e2, err := parseCRI(again)
		if err != nil {
			t.Fatalf("parseCRI(%q) = %v; its entry written back as %q does not parse: %v", line, e, again, err)
		}
		if !e2.time.Equal(e.time) || e2.partial != e.partial || !bytes.Equal(e2.content, e.content) {
			t.Fatalf("round trip of %q: %v %v %q, then %v %v %q", line, e.time, e.partial, e.content, e2.time, e2.partial, e2.content)
		}
	})
}
