package cgroupfs

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Populated reads "populated" from a cgroup2 directory's cgroup.events:
// whether any process is left in the cgroup or below it.
func Populated(dir string) (bool, error) {
	file := filepath.Join(dir, "cgroup.events")
	var buf [128]byte
	data, err := readSmall(file, buf[:])
	if err != nil {
		return false, err
	}
	v, ok, err := parseKeyedValue(data, "populated")
	if err == nil && !ok {
		err = fmt.Errorf("%s: no populated line", file)
	}
	return v != 0, err
}

// readKills reads the cgroup's oom_kill counter: from memory.oom_control
// with v1 memory, from memory.events on a unified host, else 0.
func (n *Notifier) readKills(w *watched) (uint64, error) {
	var file string
	switch {
	case w.memDir != "":
		file = filepath.Join(w.memDir, "memory.oom_control")
	case w.memEvents:
		file = filepath.Join(w.dir, "memory.events")
	default:
		return 0, nil
	}
	var buf [512]byte
	data, err := readSmall(file, buf[:])
	if err != nil {
		return 0, err
	}
	// No oom_kill line (kernels before 4.13) reads as no kill.
	v, _, err := parseKeyedValue(data, "oom_kill")
	return v, err
}

// readSmall reads a small cgroup file into buf with three syscalls (no
// stat, no netpoller registration: Watch and every event read one). A
// file larger than buf is an error.
func readSmall(file string, buf []byte) ([]byte, error) {
	fd, err := unix.Open(file, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: file, Err: err}
	}
	defer unix.Close(fd)
	n, err := unix.Read(fd, buf)
	for err == unix.EINTR {
		n, err = unix.Read(fd, buf)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: file, Err: err}
	}
	if n == len(buf) {
		return nil, fmt.Errorf("read %s: longer than %d bytes", file, len(buf))
	}
	return buf[:n], nil
}

// parseKeyedValue finds "key value" in a cgroup flat-keyed file.
func parseKeyedValue(data []byte, key string) (v uint64, found bool, err error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, val, ok := bytes.Cut(sc.Bytes(), []byte{' '})
		if !ok || string(k) != key {
			continue
		}
		v, err := strconv.ParseUint(string(bytes.TrimSpace(val)), 10, 64)
		if err != nil {
			return 0, false, fmt.Errorf("parse %s %q: %w", key, val, err)
		}
		return v, true, nil
	}
	return 0, false, sc.Err()
}

// notifyMounts are the mount points the Notifier reads.
type notifyMounts struct {
	cgroup2  string // first cgroup2 mount
	memoryV1 string // v1 hierarchy with the memory controller
}

func notifyMountsOf(mounts []mount) notifyMounts {
	var m notifyMounts
	for _, mt := range mounts {
		switch {
		case mt.v2 && m.cgroup2 == "":
			m.cgroup2 = mt.dir
		case !mt.v2 && m.memoryV1 == "" && mt.has("memory"):
			m.memoryV1 = mt.dir
		}
	}
	return m
}
