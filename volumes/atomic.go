package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// A volume directory holds its files in a hidden timestamped directory
// and exposes them through one symlink, so an update is a single rename
// and a reader sees either all old or all new files:
//
//	<dir>/..2026_11_21_10_00_00.123456789/ca.crt   the files
//	<dir>/..data -> ..2026_11_21_10_00_00.123456789
//	<dir>/ca.crt -> ..data/ca.crt                    one per top-level name
//
// Containers see the same layout other nodes give them, and tools that
// watch "..data" for updates keep working.
const (
	dataLink    = "..data"
	dataLinkTmp = "..data_tmp"
	// tsLayout names the timestamped directories; makeDataDir appends a
	// random suffix.
	tsLayout = "..2006_01_02_15_04_05."
)

// writer writes payloads into volume directories.
type writer struct {
	// gid owns every file and directory when >= 0 (the pod's fsGroup).
	gid int
	now func() time.Time
}

// write makes dir hold exactly pl. It reports whether anything was
// written: a payload equal to what dir already holds leaves dir alone.
//
// Everything below dir goes through an os.Root of it, which never follows
// a link out of dir, and every file and directory the write makes is
// created new (O_EXCL, mkdir) before its mode and owners are set on the
// open file. What a container could have planted in the volume (its
// mount is read-only, but a volume must not rely on one bug being the
// only one) is replaced or refused, never written through.
func (w writer) write(dir string, pl payload) (changed bool, retErr error) {
	if err := pl.validate(); err != nil {
		return false, err
	}
	if w.gid >= 0 {
		for p, f := range pl {
			f.mode |= fsGroupFileBits
			pl[p] = f
		}
	}
	if err := w.ownRoot(dir); err != nil {
		return false, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return false, err
	}
	defer root.Close()
	oldTS, err := root.Readlink(dataLink)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", dataLink, err)
	}
	if oldTS != "" && !strings.Contains(oldTS, "/") && w.holds(root, oldTS, pl) {
		return false, w.link(root, pl)
	}

	tsDir, err := makeDataDir(root, w.now().UTC().Format(tsLayout))
	if err != nil {
		return false, fmt.Errorf("make data directory: %w", err)
	}
	switched := false
	defer func() {
		// Until "..data" points at it, a failed write leaves nothing behind.
		if retErr != nil && !switched {
			root.RemoveAll(tsDir)
		}
	}()
	if err := w.fill(root, tsDir, pl); err != nil {
		return false, err
	}
	// A rename over the old symlink is the one atomic step.
	if err := root.Remove(dataLinkTmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := root.Symlink(tsDir, dataLinkTmp); err != nil {
		return false, fmt.Errorf("link new data: %w", err)
	}
	if err := w.ownLink(root, dataLinkTmp); err != nil {
		root.Remove(dataLinkTmp)
		return false, err
	}
	if err := root.Rename(dataLinkTmp, dataLink); err != nil {
		root.Remove(dataLinkTmp)
		return false, fmt.Errorf("switch to new data: %w", err)
	}
	switched = true
	if err := w.link(root, pl); err != nil {
		return true, err
	}
	return true, removeOldData(root, tsDir)
}

// makeDataDir makes a new timestamped directory, prefix and a random
// suffix, so two writes within one clock tick cannot collide.
func makeDataDir(root *os.Root, prefix string) (string, error) {
	for range 100 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		err := root.Mkdir(name, dataDirMode)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
	return "", fmt.Errorf("no free name for %s*", prefix)
}

// removeOldData removes every timestamped directory but keep: the one
// replaced just now and any a crash left half written. A link among them
// is removed, never followed (RemoveAll does not follow links).
func removeOldData(root *os.Root, keep string) error {
	entries, err := readDir(root, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if name := e.Name(); e.IsDir() && strings.HasPrefix(name, "..") && name != keep {
			if err := root.RemoveAll(name); err != nil {
				return fmt.Errorf("remove old data %s: %w", name, err)
			}
		}
	}
	return nil
}

func readDir(root *os.Root, name string) ([]fs.DirEntry, error) {
	d, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadDir(-1)
}

// fill writes pl into tsDir, which write has just made. Every file and
// directory is created new: one that is already there (a link planted
// between the mkdir and the writes) is an error, not a place to write.
func (w writer) fill(root *os.Root, tsDir string, pl payload) error {
	if err := w.ownDir(root, tsDir, dataDirMode); err != nil {
		return err
	}
	made := map[string]bool{tsDir: true}
	for p, f := range pl {
		name := path.Join(tsDir, p)
		if err := w.mkdirs(root, made, path.Dir(name)); err != nil {
			return err
		}
		if err := w.create(root, name, f); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	return nil
}

// create writes one new file and sets its mode and owners on the open
// file: O_EXCL fails on anything already at name, a link included.
func (w writer) create(root *os.Root, name string, f file) error {
	out, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, f.mode)
	if err != nil {
		return err
	}
	_, err = out.Write(f.data)
	if err == nil {
		err = w.ownOpen(out, f.mode, f.uid)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirs makes dir and its parents below the data directory, owned like
// it. made holds the directories this write made; any other name in the
// way is refused.
func (w writer) mkdirs(root *os.Root, made map[string]bool, dir string) error {
	if made[dir] {
		return nil
	}
	if err := w.mkdirs(root, made, path.Dir(dir)); err != nil {
		return err
	}
	if err := root.Mkdir(dir, dataDirMode); err != nil {
		return err
	}
	made[dir] = true
	return w.ownDir(root, dir, dataDirMode)
}

// errDiffers stops the walk in holds at the first difference.
var errDiffers = errors.New("differs")

// holds reports whether tsDir contains exactly pl's files with the same
// bytes, modes and owners. It only reads, and only beneath root.
func (w writer) holds(root *os.Root, tsDir string, pl payload) bool {
	seen := 0
	err := fs.WalkDir(root.FS(), tsDir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel := strings.TrimPrefix(name, tsDir+"/")
		want, ok := pl[rel]
		if !ok || !d.Type().IsRegular() {
			return errDiffers
		}
		fi, err := d.Info()
		if err != nil || fi.Mode().Perm() != want.mode.Perm() || !w.ownedAs(fi, want) {
			return errDiffers
		}
		got, err := root.ReadFile(name)
		if err != nil || !bytes.Equal(got, want.data) {
			return errDiffers
		}
		seen++
		return nil
	})
	return err == nil && seen == len(pl)
}

// link makes a "name -> ..data/name" symlink for each top-level name of
// pl and removes the ones an earlier payload left behind.
func (w writer) link(root *os.Root, pl payload) error {
	top := make(map[string]bool, len(pl))
	for p := range pl {
		first, _, _ := strings.Cut(p, "/")
		top[first] = true
	}
	for name := range top {
		target := dataLink + "/" + name
		if got, err := root.Readlink(name); err != nil || got != target {
			if err := root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("replace %s: %w", name, err)
			}
			if err := root.Symlink(target, name); err != nil {
				return fmt.Errorf("link %s: %w", name, err)
			}
		}
		if err := w.ownLink(root, name); err != nil {
			return err
		}
	}
	entries, err := readDir(root, ".")
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if top[name] || strings.HasPrefix(name, "..") || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if got, err := root.Readlink(name); err == nil && strings.HasPrefix(got, dataLink+"/") {
			if err := root.Remove(name); err != nil {
				return fmt.Errorf("remove stale %s: %w", name, err)
			}
		}
	}
	return nil
}
