// Package fsgroup checks what the kernel made of the setgid bit podline
// sets on fsGroup volume directories.
package fsgroup

import (
	"errors"
	"fmt"
	"io/fs"
)

// ErrSetgidDropped means a chmod asked for the setgid bit and the kernel
// cleared it. It does so, silently, when the caller is not in the file's
// group and lacks CAP_FSETID. Without the bit, files containers make in
// the volume do not join the fsGroup, and a pod sharing the volume between
// users breaks in ways far from the cause; so the volume fails to mount
// instead, naming the capability.
var ErrSetgidDropped = errors.New("the kernel dropped the setgid bit: podline lacks CAP_FSETID")

// CheckSetgid returns ErrSetgidDropped, naming path, when want asks for
// setgid and got, the file's mode after the chmod, lacks it.
func CheckSetgid(path string, want, got fs.FileMode) error {
	if want&fs.ModeSetgid != 0 && got&fs.ModeSetgid == 0 {
		return fmt.Errorf("%s: %w", path, ErrSetgidDropped)
	}
	return nil
}
