// Package mountinfo is what podline knows of the mount table: one reading
// of /proc/self/mountinfo for every part of podline that needs to know
// what is mounted where (cgroup hierarchies, volume mounts under a pod
// directory), and a shared, briefly cached reading for callers that ask
// once per pod (shared.go).
//
// The parsing is github.com/moby/sys/mountinfo's. It replaced a
// hand-written parser that gave the same entries, on a synthetic table
// and on the live one, and was slower on a table of 10,000 pod tmpfs
// mounts (numbers in bench/libcost).
package mountinfo

import (
	"bytes"
	"os"
	"strconv"
	"strings"

	moby "github.com/moby/sys/mountinfo"
)

// Entry is one mount.
type Entry struct {
	Dev    string // major:minor, the same for every mount of one filesystem
	Root   string // the mount's root within its filesystem
	Dir    string // mount point
	FSType string
	// Options are the superblock options (for cgroup v1: the controllers).
	Options []string
}

// Read parses this process's mount table.
func Read() ([]Entry, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	return Parse(data), nil
}

// Parse reads mountinfo lines such as
//
//	35 31 0:32 / /sys/fs/cgroup/memory rw,relatime shared:9 - cgroup cgroup rw,memory
//
// Malformed lines are skipped.
func Parse(data []byte) []Entry {
	infos, err := moby.GetMountsFromReader(bytes.NewReader(data), nil)
	if err == nil {
		return entries(infos)
	}
	// The library fails the whole table on one bad line. The kernel
	// writes none, so this slow path, a line at a time, serves only
	// hand-made tables (test fixtures) with their bad lines left out.
	var out []Entry
	for line := range bytes.Lines(data) {
		if infos, err := moby.GetMountsFromReader(bytes.NewReader(line), nil); err == nil {
			out = append(out, entries(infos)...)
		}
	}
	return out
}

func entries(infos []*moby.Info) []Entry {
	out := make([]Entry, len(infos))
	for i, m := range infos {
		out[i] = Entry{
			Dev:     strconv.Itoa(m.Major) + ":" + strconv.Itoa(m.Minor),
			Root:    m.Root,
			Dir:     m.Mountpoint,
			FSType:  m.FSType,
			Options: strings.Split(m.VFSOptions, ","),
		}
	}
	return out
}

// Unescape undoes the kernel's octal escapes of space, tab, newline and
// backslash (`\040`) in mountinfo paths. Read and Parse already return
// unescaped paths; this is for paths taken from mountinfo text by hand.
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
