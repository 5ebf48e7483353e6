package volumes

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
	// tsLayout names the timestamped directories; MkdirTemp appends a
	// random suffix so two writes within one clock tick cannot collide.
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
	oldTS, err := os.Readlink(filepath.Join(dir, dataLink))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("read %s: %w", dataLink, err)
	}
	if oldTS != "" && !strings.Contains(oldTS, "/") && w.holds(filepath.Join(dir, oldTS), pl) {
		return false, w.link(dir, pl)
	}

	tsDir, err := os.MkdirTemp(dir, w.now().UTC().Format(tsLayout))
	if err != nil {
		return false, fmt.Errorf("make data directory: %w", err)
	}
	switched := false
	defer func() {
		// Until "..data" points at it, a failed write leaves nothing behind.
		if retErr != nil && !switched {
			os.RemoveAll(tsDir)
		}
	}()
	if err := w.fill(tsDir, pl); err != nil {
		return false, err
	}
	// A rename over the old symlink is the one atomic step.
	tmp := filepath.Join(dir, dataLinkTmp)
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if err := os.Symlink(filepath.Base(tsDir), tmp); err != nil {
		return false, fmt.Errorf("link new data: %w", err)
	}
	if err := w.ownLink(tmp); err != nil {
		os.Remove(tmp)
		return false, err
	}
	if err := os.Rename(tmp, filepath.Join(dir, dataLink)); err != nil {
		os.Remove(tmp)
		return false, fmt.Errorf("switch to new data: %w", err)
	}
	switched = true
	if err := w.link(dir, pl); err != nil {
		return true, err
	}
	return true, removeOldData(dir, filepath.Base(tsDir))
}

// removeOldData removes every timestamped directory but keep: the one
// replaced just now and any a crash left half written.
func removeOldData(dir, keep string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if name := e.Name(); e.IsDir() && strings.HasPrefix(name, "..") && name != keep {
			if err := os.RemoveAll(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("remove old data %s: %w", name, err)
			}
		}
	}
	return nil
}

// fill writes pl into the fresh directory tsDir.
func (w writer) fill(tsDir string, pl payload) error {
	if err := w.ownDir(tsDir, dataDirMode); err != nil {
		return err
	}
	for p, f := range pl {
		path := filepath.Join(tsDir, filepath.FromSlash(p))
		if err := w.mkdirs(tsDir, filepath.Dir(path)); err != nil {
			return err
		}
		if err := os.WriteFile(path, f.data, f.mode); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := w.ownFile(path, f.mode, f.uid); err != nil {
			return err
		}
	}
	return nil
}

// mkdirs makes dir and its parents up to root, owned like root.
func (w writer) mkdirs(root, dir string) error {
	if dir == root {
		return nil
	}
	if _, err := os.Lstat(dir); err == nil {
		return nil
	}
	if err := w.mkdirs(root, filepath.Dir(dir)); err != nil {
		return err
	}
	if err := os.Mkdir(dir, dataDirMode); err != nil {
		return err
	}
	return w.ownDir(dir, dataDirMode)
}

// errDiffers stops the walk in holds at the first difference.
var errDiffers = errors.New("differs")

// holds reports whether tsDir contains exactly pl's files with the same
// bytes, modes and owners.
func (w writer) holds(tsDir string, pl payload) bool {
	seen := 0
	err := filepath.WalkDir(tsDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(tsDir, path)
		if err != nil {
			return err
		}
		want, ok := pl[filepath.ToSlash(rel)]
		if !ok || !d.Type().IsRegular() {
			return errDiffers
		}
		fi, err := d.Info()
		if err != nil || fi.Mode().Perm() != want.mode.Perm() || !w.ownedAs(fi, want) {
			return errDiffers
		}
		got, err := os.ReadFile(path)
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
func (w writer) link(dir string, pl payload) error {
	top := make(map[string]bool, len(pl))
	for p := range pl {
		first, _, _ := strings.Cut(p, "/")
		top[first] = true
	}
	for name := range top {
		target := dataLink + "/" + name
		link := filepath.Join(dir, name)
		if got, err := os.Readlink(link); err != nil || got != target {
			if err := os.Remove(link); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("replace %s: %w", name, err)
			}
			if err := os.Symlink(target, link); err != nil {
				return fmt.Errorf("link %s: %w", name, err)
			}
		}
		if err := w.ownLink(link); err != nil {
			return err
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if top[name] || strings.HasPrefix(name, "..") || e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		if got, err := os.Readlink(filepath.Join(dir, name)); err == nil && strings.HasPrefix(got, dataLink+"/") {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("remove stale %s: %w", name, err)
			}
		}
	}
	return nil
}
