package volumes

import (
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/podline/podline/kubeapi"
	v1 "k8s.io/api/core/v1"
)

// defaultFileMode is the API server's default for defaultMode; pods
// from files may leave it unset.
const defaultFileMode = 0o644

// file is one file of a volume.
type file struct {
	data []byte
	mode fs.FileMode
	// uid owns the file: root unless a token goes to the pod's user.
	uid int
}

// payload is a volume's files by path relative to the volume.
type payload map[string]file

// add puts a file at p, refusing a second file at the same path: two
// projected sources may not write one path.
func (pl payload) add(p string, data []byte, mode fs.FileMode) error {
	return pl.addFile(p, file{data: data, mode: mode})
}

func (pl payload) addFile(p string, f file) error {
	if _, dup := pl[p]; dup {
		return fmt.Errorf("%w: two files at path %q", ErrInvalid, p)
	}
	pl[p] = f
	return nil
}

// A volume's files are written by podline, on the node's disk or, for
// secrets and tokens, in a tmpfs charged to podline: items may name one key
// under thousands of paths, so what one volume may write is bounded. The
// API server bounds an object to about 1 MiB; these leave room for many.
const (
	maxPayloadBytes = 64 << 20
	maxPayloadFiles = 10_000
)

// validate checks that every path stays inside the volume, does not
// collide with the writer's own "..data" names, that no file is also the
// parent directory of another, and that the volume is not too large.
func (pl payload) validate() error {
	if len(pl) > maxPayloadFiles {
		return fmt.Errorf("%w: %d files, more than the %d a volume may hold", ErrInvalid, len(pl), maxPayloadFiles)
	}
	total := 0
	for _, f := range pl {
		total += len(f.data)
	}
	if total > maxPayloadBytes {
		return fmt.Errorf("%w: %d bytes of files, more than the %d MiB a volume may hold", ErrInvalid, total, maxPayloadBytes>>20)
	}
	for p := range pl {
		if err := checkPath(p); err != nil {
			return err
		}
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if _, ok := pl[dir]; ok {
				return fmt.Errorf("%w: %q is both a file and the directory of %q", ErrInvalid, dir, p)
			}
		}
	}
	return nil
}

func checkPath(p string) error {
	switch {
	case p == "":
		return fmt.Errorf("%w: empty file path", ErrInvalid)
	case path.IsAbs(p):
		return fmt.Errorf("%w: file path %q must be relative", ErrInvalid, p)
	case strings.HasPrefix(p, ".."):
		return fmt.Errorf("%w: file path %q must not start with \"..\"", ErrInvalid, p)
	case path.Clean(p) != p:
		return fmt.Errorf("%w: file path %q is not clean", ErrInvalid, p)
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return fmt.Errorf("%w: file path %q leaves the volume", ErrInvalid, p)
		}
	}
	return nil
}

// fileMode picks an item's mode over the volume's default mode over 0644.
func fileMode(item, volumeDefault *int32) fs.FileMode {
	switch {
	case item != nil:
		return fs.FileMode(*item) & fs.ModePerm
	case volumeDefault != nil:
		return fs.FileMode(*volumeDefault) & fs.ModePerm
	}
	return defaultFileMode
}

// project maps an object's keys to files: every key under its own name
// when items is empty, else only the listed keys under their paths. A
// listed key the object lacks is an error unless the source is optional.
func project(pl payload, ref kubeapi.ObjectRef, data map[string][]byte, items []v1.KeyToPath, defaultMode *int32, optional bool) error {
	if len(items) == 0 {
		for k, v := range data {
			if err := pl.add(k, v, fileMode(nil, defaultMode)); err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			if optional {
				continue
			}
			return keyNotFound(ref.Kind, it.Key)
		}
		if err := pl.add(it.Path, v, fileMode(it.Mode, defaultMode)); err != nil {
			return fmt.Errorf("%s: %w", ref, err)
		}
	}
	return nil
}
