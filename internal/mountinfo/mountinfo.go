// Package mountinfo parses /proc/self/mountinfo: one parser for every part
// of podline that needs to know what is mounted where (cgroup hierarchies,
// volume mounts under a pod directory).
package mountinfo

import (
	"bytes"
	"os"
	"strings"
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
// Six fixed fields come before the optional ones and the "-" that ends
// them. Malformed lines are skipped.
func Parse(data []byte) []Entry {
	var out []Entry
	for line := range bytes.Lines(data) {
		fields := strings.Fields(string(line))
		sep := -1
		for i := 6; i < len(fields); i++ {
			if fields[i] == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || sep+3 >= len(fields) {
			continue
		}
		out = append(out, Entry{
			Dev:     fields[2],
			Root:    Unescape(fields[3]),
			Dir:     Unescape(fields[4]),
			FSType:  fields[sep+1],
			Options: strings.Split(fields[sep+3], ","),
		})
	}
	return out
}

// Unescape undoes the kernel's octal escapes of space, tab, newline and
// backslash (`\040`) in mountinfo paths.
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
