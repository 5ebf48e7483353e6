package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// statsBuf is the scratch space of one Read: the NUL-terminated path of the
// file being read and its contents. Pooled, so a scrape of thousands of
// cgroups allocates nothing per cgroup.
type statsBuf struct {
	path   []byte // <mount><cgroup>/ then the file name and a NUL
	dirLen int    // len(path) up to and including the '/' after the cgroup
	data   []byte
}

const (
	// statsDataSize fits a v2 memory.stat of a 6.x kernel (about 1.5 KiB)
	// several times over; a larger file grows the buffer.
	statsDataSize = 8 << 10
	// statsDataMax caps what a pooled buffer keeps after growing.
	statsDataMax = 256 << 10
)

// atFDCWD is a variable: the constant, negative, does not convert to uintptr.
var atFDCWD = unix.AT_FDCWD

var statsBufPool = sync.Pool{New: func() any {
	return &statsBuf{path: make([]byte, 0, 512), data: make([]byte, statsDataSize)}
}}

func getStatsBuf() *statsBuf { return statsBufPool.Get().(*statsBuf) }

func putStatsBuf(b *statsBuf) {
	if cap(b.data) > statsDataMax {
		b.data = make([]byte, statsDataSize)
	}
	statsBufPool.Put(b)
}

// setDir points the buffer at the cgroup directory mount+rel.
func (b *statsBuf) setDir(mount, rel string) {
	p := append(b.path[:0], mount...)
	if len(rel) > 0 && rel[0] != '/' {
		p = append(p, '/')
	}
	p = append(p, rel...)
	if len(p) == 0 || p[len(p)-1] != '/' {
		p = append(p, '/')
	}
	b.path, b.dirLen = p, len(p)
}

// fileName returns the path of the file last opened, for errors (it
// allocates, so only error paths call it).
func (b *statsBuf) fileName() string {
	n := len(b.path)
	if n > 0 && b.path[n-1] == 0 {
		n--
	}
	return string(b.path[:n])
}

// dirExists says whether the cgroup directory exists; a file missing from
// an existing cgroup means a controller not enabled for it.
func (b *statsBuf) dirExists() bool {
	var st unix.Stat_t
	return unix.Stat(string(b.path[:b.dirLen]), &st) == nil
}

// unlessAbsent returns err unless it says that a controller's first file
// is missing from a cgroup directory that exists: a controller not enabled
// for this cgroup, nothing to read and no error. A missing directory stays
// an error wrapping fs.ErrNotExist.
func (b *statsBuf) unlessAbsent(err error) error {
	if errors.Is(err, fs.ErrNotExist) && b.dirExists() {
		return nil
	}
	return err
}

// read reads the file name of the current cgroup into b.data. It opens the
// file by a NUL-terminated path of its own (unix.Open would copy the path
// to a new allocation on every call) and stops at the first short read:
// cgroup files are seq_files, which return their whole text at once.
func (b *statsBuf) read(name string) ([]byte, error) {
	b.path = append(append(b.path[:b.dirLen], name...), 0)
	var fd int
	for {
		r, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(atFDCWD),
			uintptr(unsafe.Pointer(&b.path[0])), uintptr(unix.O_RDONLY|unix.O_CLOEXEC), 0, 0, 0)
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return nil, &fs.PathError{Op: "open", Path: b.fileName(), Err: errno}
		}
		fd = int(r)
		break
	}
	defer unix.Close(fd)
	n := 0
	for {
		if n == len(b.data) {
			grown := make([]byte, 2*len(b.data))
			copy(grown, b.data[:n])
			b.data = grown
		}
		m, err := unix.Read(fd, b.data[n:])
		if err == unix.EINTR {
			continue
		}
		if err == unix.ENODEV {
			// kernfs: the cgroup was removed after the open.
			return nil, fmt.Errorf("read %s: %w (%w)", b.fileName(), fs.ErrNotExist, err)
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: b.fileName(), Err: err}
		}
		n += m
		if m == 0 || n < len(b.data) {
			return b.data[:n], nil
		}
	}
}

// readUint reads a file holding one number.
func (b *statsBuf) readUint(name string) (uint64, error) {
	data, err := b.read(name)
	if err != nil {
		return 0, err
	}
	v, ok := parseUintLine(data)
	if !ok {
		return 0, b.malformed(data)
	}
	return v, nil
}

// malformed is the error of a file of the current cgroup that did not parse.
func (b *statsBuf) malformed(data []byte) error {
	const show = 64
	if len(data) > show {
		data = data[:show]
	}
	return fmt.Errorf("%w %s: %q", ErrBadStatsFile, b.fileName(), data)
}

// parseUintLine parses a file of one decimal number and a newline.
func parseUintLine(data []byte) (uint64, bool) {
	return parseUintBytes(trimNewline(data))
}

func trimNewline(data []byte) []byte {
	for len(data) > 0 && (data[len(data)-1] == '\n' || data[len(data)-1] == ' ') {
		data = data[:len(data)-1]
	}
	return data
}

// parseUintBytes parses a decimal number without allocating (strconv
// wants a string).
func parseUintBytes(s []byte) (uint64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// eachKeyed calls fn for each "key value" line of a flat-keyed cgroup file
// (memory.stat, cpu.stat) until fn returns false. A line that is not a key,
// one space and a decimal number makes it return false.
func eachKeyed(data []byte, fn func(key []byte, v uint64) bool) bool {
	for len(data) > 0 {
		line := data
		rest := []byte(nil)
		for i, c := range data {
			if c == '\n' {
				line, rest = data[:i], data[i+1:]
				break
			}
		}
		data = rest
		if len(line) == 0 {
			continue
		}
		sp := -1
		for i, c := range line {
			if c == ' ' {
				sp = i
				break
			}
		}
		if sp <= 0 {
			return false
		}
		v, ok := parseUintBytes(line[sp+1:])
		if !ok {
			return false
		}
		if !fn(line[:sp], v) {
			return true
		}
	}
	return true
}
