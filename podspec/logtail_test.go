package podspec

import (
	"fmt"
	"strings"
	"testing"
)

// criLine renders one CRI log line as a runtime writes it.
func criLine(stream, tag, content string) string {
	return "2026-11-21T12:00:00.123456789Z " + stream + " " + tag + " " + content + "\n"
}

func TestLogTailMessage(t *testing.T) {
	f := func(name, log string, fromStart bool, want string, wantEnough bool) {
		t.Helper()
		got, enough := LogTailMessage([]byte(log), fromStart)
		if got != want || enough != wantEnough {
			t.Errorf("%s:\n got %q (enough %v)\nwant %q (enough %v)", name, got, enough, want, wantEnough)
		}
	}
	f("empty log", "", true, "", true)
	f("full lines keep their newline, both streams", criLine("stdout", "F", "starting")+criLine("stderr", "F", "fatal: no config"),
		true, "starting\nfatal: no config\n", true)
	f("partial lines join the next", criLine("stdout", "P", "a very ")+criLine("stdout", "P", "long ")+criLine("stdout", "F", "line"),
		true, "a very long line\n", true)
	f("more tags after the first", criLine("stdout", "F:x=y", "tagged"), true, "tagged\n", true)
	f("an empty full line", criLine("stdout", "F", ""), true, "\n", true)
	f("timestamps of any precision", "2026-11-21T12:00:00Z stdout F a\n2026-11-21T12:00:00.5+01:00 stderr F b\n",
		true, "a\nb\n", true)
	f("lines not in CRI format are left out",
		"garbage\n"+"not-a-time stdout F x\n"+"2026-11-21T12:00:00Z stdin F x\n"+"2026-11-21T12:00:00Z stdout F\n"+
			criLine("stdout", "F", "kept"), true, "kept\n", true)
	f("an unfinished last line is left out", criLine("stdout", "F", "done")+"2026-11-21T12:00:00Z stdout F half",
		true, "done\n", true)
	f("a window's first line may be cut: left out", "00Z stdout F cut\n"+criLine("stdout", "F", "whole"),
		false, "whole\n", false)
	f("a window without a whole line", "stdout F no newline", false, "", false)

	var lines strings.Builder
	for i := range 100 {
		lines.WriteString(criLine("stdout", "F", fmt.Sprint(i)))
	}
	var want strings.Builder
	for i := 20; i < 100; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	f("the last 80 lines", lines.String(), true, want.String(), true)
	f("80 lines are enough, whatever came before", lines.String()[40:], false, want.String(), true)
	f("unparsable lines count among the 80", "x\n"+lines.String()[len(criLine("stdout", "F", "0")):]+"junk\n",
		true, strings.TrimPrefix(want.String(), "20\n"), true)

	long := strings.Repeat("x", 3000) + "END"
	f("the last 2048 bytes", criLine("stdout", "F", "before")+criLine("stdout", "F", long), true,
		long[len(long)+1-2048:]+"\n", true)
	f("2048 bytes are enough, whatever came before", "ut F cut\n"+criLine("stdout", "F", long), false,
		long[len(long)+1-2048:]+"\n", true)
	f("the cut may fall inside an earlier line", criLine("stderr", "F", strings.Repeat("a", 2000))+criLine("stdout", "F", strings.Repeat("b", 100)),
		true, strings.Repeat("a", 2048-101-1)+"\n"+strings.Repeat("b", 100)+"\n", true)
}
