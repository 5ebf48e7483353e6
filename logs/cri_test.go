package logs

import (
	"errors"
	"testing"
	"time"
)

func TestParseCRI(t *testing.T) {
	ts := time.Date(2016, 10, 6, 0, 17, 9, 669794202, time.UTC)
	f := func(line string, wantTime time.Time, partial bool, content string) {
		t.Helper()
		e, err := parseCRI([]byte(line))
		if err != nil {
			t.Errorf("parseCRI(%q): %v", line, err)
			return
		}
		if !e.time.Equal(wantTime) || e.partial != partial || string(e.content) != content {
			t.Errorf("parseCRI(%q) = %v %v %q, want %v %v %q", line, e.time, e.partial, e.content, wantTime, partial, content)
		}
	}
	f("2016-10-06T00:17:09.669794202Z stdout F log content 1\n", ts, false, "log content 1\n")
	f("2016-10-06T00:17:09.669794202Z stderr P part\n", ts, true, "part")
	// Later tags after a ':' keep the first one's meaning.
	f("2016-10-06T00:17:09.669794202Z stdout P:x part\n", ts, true, "part")
	f("2016-10-06T00:17:09.669794202Z stdout F:x whole\n", ts, false, "whole\n")
	f("2016-10-06T00:17:09.669794202Z stdout X whole\n", ts, false, "whole\n")
	f("2016-10-06T00:17:09.669794202Z stdout PF whole\n", ts, false, "whole\n")
	// Runtimes trim trailing zeros of the nanoseconds, or write an offset.
	f("2016-10-06T00:17:09.6697942Z stdout F a\n", ts.Truncate(100), false, "a\n")
	f("2016-10-06T00:17:09Z stdout F a\n", ts.Truncate(time.Second), false, "a\n")
	f("2016-10-06T02:17:09.669794202+02:00 stdout F a\n", ts, false, "a\n")
	// Empty lines, and content keeping its own spaces.
	f("2016-10-06T00:17:09.669794202Z stdout F \n", ts, false, "\n")
	f("2016-10-06T00:17:09.669794202Z stdout P \n", ts, true, "")
	f("2016-10-06T00:17:09.669794202Z stdout F  two  spaces \n", ts, false, " two  spaces \n")
	// Unterminated (a write under way): what there is.
	f("2016-10-06T00:17:09.669794202Z stdout F cut", ts, false, "cut")
	f("2016-10-06T00:17:09.669794202Z stdout P cut", ts, true, "cut")
	// A line without a tag whose content has a space: the first word
	// passes for the tag, as in the kubelet.
	f("2016-10-06T00:17:09.669794202Z stdout hello world\n", ts, false, "world\n")
}

func TestParseCRIMalformed(t *testing.T) {
	f := func(line string) {
		t.Helper()
		if _, err := parseCRI([]byte(line)); !errors.Is(err, errMalformed) {
			t.Errorf("parseCRI(%q) = %v, want errMalformed", line, err)
		}
	}
	f("")
	f("\n")
	f("garbage\n")
	f("2016-10-06T00:17:09.669794202Z\n")
	f("2016-10-06T00:17:09.669794202Z stdout\n")
	f("2016-10-06T00:17:09.669794202Z stdout F\n")
	// No tag field at all: older formats are not guessed at.
	f("2016-10-06T00:17:09.669794202Z stdout hello\n")
	f("2016-10-06T00:17:09.669794202Z stdin F x\n")
	f("2016-10-06 stdout F x\n")
	f("yesterday stdout F x\n")
	f(`{"log":"docker json\n","stream":"stdout","time":"2016-10-20T18:39:20.57606443Z"}` + "\n")
}
