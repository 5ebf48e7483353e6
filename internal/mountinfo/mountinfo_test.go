package mountinfo

import (
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	got := Parse([]byte("22 27 0:21 / /proc rw,relatime - proc proc rw\n" +
		"35 31 0:32 /sub /mnt/with\\040space rw,relatime shared:9 - cgroup cgroup rw,memory\n" +
		"garbage line\n"))
	if len(got) != 2 {
		t.Fatalf("entries %+v", got)
	}
	e := got[1]
	if e.Dev != "0:32" || e.Root != "/sub" || e.Dir != "/mnt/with space" || e.FSType != "cgroup" || !slices.Equal(e.Options, []string{"rw", "memory"}) {
		t.Fatalf("entry %+v", e)
	}
	if Unescape(`a\134b\011c\012`) != "a\\b\tc\n" {
		t.Fatal("unescape")
	}
}
