// Package filestamp tells whether files changed since they were last
// read: for credentials that operators rotate by replacing files (a
// serving certificate, a CA bundle) and that a long-running agent must
// pick up without a restart, as the kubelet does.
package filestamp

import (
	"fmt"
	"os"
	"syscall"
)

// Of returns a stamp of the files: their identity, size and modification
// time. Two equal stamps mean no file was replaced or written in between
// (to the resolution of the file system's clock); a file replaced by a
// rename, as tools rotate them, has a new inode and so a new stamp.
func Of(paths ...string) (string, error) {
	var s string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		var ino uint64
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			ino = sys.Ino
		}
		s += fmt.Sprintf("%s:%d:%d:%d;", p, ino, st.Size(), st.ModTime().UnixNano())
	}
	return s, nil
}
