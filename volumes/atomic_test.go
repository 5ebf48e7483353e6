package volumes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

func testWriter() writer { return writer{gid: -1, now: time.Now} }

func TestWriteLayout(t *testing.T) {
	dir := volumeDir(t)
	changed, err := testWriter().write(dir, payload{
		"a":         {data: []byte("one"), mode: 0o644},
		"conf/b.sh": {data: []byte("two"), mode: 0o755},
	})
	if err != nil || !changed {
		t.Fatalf("write: changed=%v err=%v", changed, err)
	}
	target := dataTarget(t, dir)
	if !regexp.MustCompile(`^\.\.\d{4}_\d\d_\d\d_\d\d_\d\d_\d\d\.\d+$`).MatchString(target) {
		t.Fatalf("..data -> %q, want a timestamped directory", target)
	}
	for name, want := range map[string]string{"a": "..data/a", "conf": "..data/conf"} {
		if got, err := os.Readlink(filepath.Join(dir, name)); err != nil || got != want {
			t.Fatalf("%s -> %q (%v), want %q", name, got, err, want)
		}
	}
	got := readVolume(t, dir)
	if len(got) != 2 || string(got["a"].data) != "one" || got["a"].mode != 0o644 ||
		string(got["conf/b.sh"].data) != "two" || got["conf/b.sh"].mode != 0o755 {
		t.Fatalf("volume holds %v", got)
	}
}

func TestWriteUnchangedLeavesFiles(t *testing.T) {
	dir := volumeDir(t)
	pl := func() payload { return payload{"k": {data: []byte("v"), mode: 0o600}} }
	if _, err := testWriter().write(dir, pl()); err != nil {
		t.Fatal(err)
	}
	before := dataTarget(t, dir)
	changed, err := testWriter().write(dir, pl())
	if err != nil || changed {
		t.Fatalf("second write: changed=%v err=%v", changed, err)
	}
	if after := dataTarget(t, dir); after != before {
		t.Fatalf("..data moved from %s to %s", before, after)
	}
	// A mode change alone is a change.
	changed, err = testWriter().write(dir, payload{"k": {data: []byte("v"), mode: 0o640}})
	if err != nil || !changed {
		t.Fatalf("mode change: changed=%v err=%v", changed, err)
	}
	if m := readVolume(t, dir)["k"].mode; m != 0o640 {
		t.Fatalf("mode %o, want 640", m)
	}
}

func TestWriteUpdateReplacesAtomically(t *testing.T) {
	dir := volumeDir(t)
	if _, err := testWriter().write(dir, payload{
		"keep":     {data: []byte("1"), mode: 0o644},
		"gone":     {data: []byte("2"), mode: 0o644},
		"deep/old": {data: []byte("3"), mode: 0o644},
	}); err != nil {
		t.Fatal(err)
	}
	old := dataTarget(t, dir)
	// An unrelated file in the volume directory is not podline's to remove.
	if err := os.WriteFile(filepath.Join(dir, "foreign"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	changed, err := testWriter().write(dir, payload{
		"keep":     {data: []byte("1b"), mode: 0o644},
		"new":      {data: []byte("4"), mode: 0o644},
		"deep/new": {data: []byte("5"), mode: 0o644},
	})
	if err != nil || !changed {
		t.Fatalf("update: changed=%v err=%v", changed, err)
	}
	if now := dataTarget(t, dir); now == old {
		t.Fatal("..data still points at the old directory")
	}
	if dirs := hiddenDirs(t, dir); len(dirs) != 1 || dirs[0] != dataTarget(t, dir) {
		t.Fatalf("data directories left: %v", dirs)
	}
	if _, err := os.Lstat(filepath.Join(dir, "gone")); !os.IsNotExist(err) {
		t.Fatalf("stale link gone: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "foreign")); err != nil {
		t.Fatalf("foreign file removed: %v", err)
	}
	got := contents(t, dir)
	delete(got, "foreign")
	want := map[string]string{"keep": "1b", "new": "4", "deep/new": "5"}
	if len(got) != len(want) {
		t.Fatalf("volume holds %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Fatalf("volume holds %v, want %v", got, want)
		}
	}
}

func TestWriteDropsNestedFile(t *testing.T) {
	// A file that only the old payload has, below a name both share, must
	// not survive: the directory link would still show it.
	dir := volumeDir(t)
	one := file{data: []byte("x"), mode: 0o644}
	if _, err := testWriter().write(dir, payload{"conf/a": one, "conf/z": one}); err != nil {
		t.Fatal(err)
	}
	changed, err := testWriter().write(dir, payload{"conf/a": one})
	if err != nil || !changed {
		t.Fatalf("changed=%v err=%v", changed, err)
	}
	if got := contents(t, dir); len(got) != 1 || got["conf/a"] != "x" {
		t.Fatalf("volume holds %v", got)
	}
}

func TestWriteRejectsBadPaths(t *testing.T) {
	f := func(pl payload) {
		t.Helper()
		dir := volumeDir(t)
		_, err := testWriter().write(dir, pl)
		wantErr(t, err, ErrInvalid, "")
		entries, _ := os.ReadDir(dir)
		if len(entries) != 0 {
			t.Fatalf("a rejected payload left %d entries", len(entries))
		}
	}
	one := file{data: []byte("x"), mode: 0o644}
	f(payload{"../escape": one})
	f(payload{"/abs": one})
	f(payload{"..data": one})
	f(payload{"a/../../b": one})
	f(payload{"a/./b": one})
	f(payload{"": one})
	f(payload{"a": one, "a/b": one})
}

func TestWriteRemovesCrashLeftovers(t *testing.T) {
	dir := volumeDir(t)
	leftover := filepath.Join(dir, "..2020_01_01_00_00_00.42")
	if err := os.MkdirAll(filepath.Join(leftover, "half"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := testWriter().write(dir, payload{"k": {data: []byte("v"), mode: 0o644}}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(leftover); !os.IsNotExist(err) {
		t.Fatalf("leftover data directory: %v", err)
	}
}

func TestWriteFSGroup(t *testing.T) {
	dir := volumeDir(t)
	const gid = 4321
	w := writer{gid: gid, now: time.Now}
	pl := func() payload {
		return payload{"secret": {data: []byte("s"), mode: 0o600}, "d/f": {data: []byte("f"), mode: 0o400}}
	}
	if _, err := w.write(dir, pl()); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{"secret": 0o640, "d/f": 0o440} {
		path := filepath.Join(dir, p)
		if m := modeOf(t, path).Perm(); m != want {
			t.Fatalf("%s mode %o, want %o", p, m, want)
		}
		if g := groupOf(t, path); g != gid {
			t.Fatalf("%s group %d, want %d", p, g, gid)
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "d")} {
		if m := modeOf(t, d); m&os.ModeSetgid == 0 || groupOf(t, d) != gid {
			t.Fatalf("%s: mode %v group %d, want setgid and group %d", d, m, groupOf(t, d), gid)
		}
	}
	if changed, err := w.write(dir, pl()); err != nil || changed {
		t.Fatalf("second write with fsGroup: changed=%v err=%v", changed, err)
	}
	// Another group is a change.
	if changed, err := (writer{gid: gid + 1, now: time.Now}).write(dir, pl()); err != nil || !changed {
		t.Fatalf("group change: changed=%v err=%v", changed, err)
	}
}

func groupOf(t *testing.T, path string) int {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return int(fi.Sys().(*syscall.Stat_t).Gid)
}

// One key under thousands of paths would have podline write gigabytes: a
// volume's files are bounded, and nothing is written past the bound.
func TestWriteRefusesOversizedPayload(t *testing.T) {
	dir := volumeDir(t)
	big := make([]byte, 1<<20)
	pl := payload{}
	for i := range maxPayloadBytes>>20 + 1 {
		pl[fmt.Sprintf("copy-%d", i)] = file{data: big, mode: 0o644}
	}
	if _, err := testWriter().write(dir, pl); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "64 MiB") {
		t.Fatalf("65 MiB of files: %v", err)
	}
	many := payload{}
	for i := range maxPayloadFiles + 1 {
		many[fmt.Sprintf("f%d", i)] = file{mode: 0o644}
	}
	if _, err := testWriter().write(dir, many); !errors.Is(err, ErrInvalid) {
		t.Fatalf("%d files: %v", len(many), err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("a refused payload left %d entries", len(entries))
	}
}
