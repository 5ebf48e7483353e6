package sources

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
)

// statPolicy says which listed manifests a directory scan stats.
type statPolicy int

const (
	// statAll stats every manifest.
	statAll statPolicy = iota
	// statUntrusted skips the manifests inotify speaks for: plain files
	// (regular, one link) already loaded, while the directory is watched.
	// A write, rename, chmod or delete of one of those is an event, and
	// the event's rescan stats it; symlinks, whose targets change with no
	// event here, and hard-linked files are stat'ed every time. At 10,000
	// manifests the stats were a third of a percent of a core every 20 s.
	statUntrusted
)

// scan lists the manifests, reloads the changed ones and delivers the full
// set. When the path itself cannot be read (other than not existing) it
// delivers nothing, keeping the current pods.
func (s *ManifestPath) scan(policy statPolicy) {
	fileScans.Inc()
	s.gen++
	info, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if !s.missing {
			s.log.Warn("manifest path does not exist; no static pods until it appears", "path", s.path)
			s.missing = true
		}
		s.ensureWatch("")
	case err != nil:
		s.log.Error("cannot read manifest path; keeping current static pods", "path", s.path, "err", err)
		return
	case info.IsDir():
		s.foundPath()
		s.ensureWatch(s.path)
		if !s.scanDir(policy) {
			return
		}
	default:
		s.foundPath()
		s.ensureWatch(filepath.Dir(s.path))
		if info.Mode().IsRegular() {
			s.scanFile(s.path, info)
		}
	}
	s.sweep()
	s.deliverChanges()
}

// scanNames looks again at the named entries of the watched directory
// alone: the files inotify said changed. The rest stand as they were.
func (s *ManifestPath) scanNames(names map[string]struct{}) {
	fileNameScans.Inc()
	for name := range names {
		full := filepath.Join(s.path, name)
		info, err := os.Stat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			s.forget(full)
		case err != nil:
			s.keepOnError(full, newClassError(ErrFetch, err.Error(), err))
		case info.Mode().IsRegular():
			s.scanFile(full, info)
		default:
			s.forget(full) // a directory now, or a device: not a manifest
		}
	}
	s.deliverChanges()
}

// incremental reports whether an event's rescan may look at the named
// files alone: the directory is there and watched.
func (s *ManifestPath) incremental() bool {
	return s.watcher != nil && s.watching == s.path && !s.missing
}

// child is the name of the manifest an event is about, when it is one
// file of the watched directory. Anything else (the directory itself, a
// dot-file such as the "..data" symlink whose swap retargets every
// manifest) needs the whole directory looked at.
func (s *ManifestPath) child(event string) (string, bool) {
	if s.watching != s.path || filepath.Dir(event) != s.path {
		return "", false
	}
	name := filepath.Base(event)
	return name, !strings.HasPrefix(name, ".")
}

func (s *ManifestPath) foundPath() {
	if s.missing {
		s.log.Info("manifest path appeared", "path", s.path)
		s.missing = false
	}
}

func (s *ManifestPath) scanDir(policy statPolicy) bool {
	entries, err := readDir(s.path)
	if err != nil {
		s.log.Error("cannot list manifest directory; keeping current static pods", "path", s.path, "err", err)
		return false
	}
	trust := policy == statUntrusted && s.watcher != nil && s.watching == s.path
	for _, de := range entries {
		name := de.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		full := filepath.Join(s.path, name)
		if e := s.files[full]; trust && e != nil && e.loaded && e.plain && de.Type().IsRegular() {
			e.gen = s.gen
			continue
		}
		info, err := os.Stat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Removed since the listing, or a dangling symlink: not there.
		case err != nil:
			s.keepOnError(full, newClassError(ErrFetch, err.Error(), err))
		case info.Mode().IsRegular():
			s.scanFile(full, info)
			s.files[full].plain = de.Type().IsRegular() && links(info) == 1
		}
	}
	return true
}

// readDir lists dir unsorted (deliver sorts what it hands over), with
// the types the directory entries carry.
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// links is the file's hard-link count; 0 when the system does not say.
func links(info fs.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 0
}

func (s *ManifestPath) entry(path string) *manifestFile {
	e := s.files[path]
	if e == nil {
		e = &manifestFile{}
		s.files[path] = e
	}
	e.gen = s.gen
	return e
}

// forget drops a manifest that is gone.
func (s *ManifestPath) forget(path string) {
	if e, ok := s.files[path]; ok {
		delete(s.files, path)
		s.setErr(path, nil)
		s.changed = s.changed || len(e.pods) > 0
	}
}

func (s *ManifestPath) scanFile(path string, info fs.FileInfo) {
	e := s.entry(path)
	st := stampOf(info)
	if e.loaded && e.stamp == st {
		return
	}
	e.stamp, e.loaded = st, true
	pods, err := s.load(path)
	if err != nil {
		s.fail(path, e, err)
		return
	}
	e.pods, e.err = pods, nil
	s.changed = true
	s.setErr(path, nil)
}

// keepOnError records a file that could not even be stat'ed; it is retried
// at every scan but logged only when the error changes.
func (s *ManifestPath) keepOnError(path string, err error) {
	e := s.entry(path)
	e.loaded = false
	if e.err != nil && e.err.Error() == fmt.Sprintf("%s: %v", path, err) {
		return
	}
	s.fail(path, e, err)
}

func (s *ManifestPath) fail(path string, e *manifestFile, err error) {
	err = fmt.Errorf("%s: %w", path, err)
	e.err = err
	fileManifestErrors.Inc()
	s.log.Error("bad pod manifest; keeping the pods it defined before", "path", path, "kept", len(e.pods), "err", err)
	s.setErr(path, err)
}

func (s *ManifestPath) load(path string) ([]*v1.Pod, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, newClassError(ErrFetch, err.Error(), err)
	}
	defer f.Close()
	// The size of the file opened, not of the one stat'ed by the scan:
	// a rename may have come between.
	if info, err := f.Stat(); err == nil && info.Size() > maxManifestBytes {
		return nil, errTooLarge("file", info.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, newClassError(ErrFetch, err.Error(), err)
	}
	if len(data) > maxManifestBytes {
		return nil, errTooLarge("file", 0) // it grew while read
	}
	pods, err := loadStatic(data, FileSource, path, s.nodeName)
	if err != nil {
		return nil, err
	}
	if len(pods) == 0 {
		// Most often a file caught mid-write; treating it as "no pods"
		// would stop the running pod.
		return nil, newClassError(ErrDecode, "no pods in manifest (delete the file to remove its pods)", nil)
	}
	return pods, nil
}

// sweep forgets the files the scan did not list.
func (s *ManifestPath) sweep() {
	for path, e := range s.files {
		if e.gen != s.gen {
			delete(s.files, path)
			s.setErr(path, nil)
			s.changed = s.changed || len(e.pods) > 0
		}
	}
}

// deliverChanges delivers when the pods changed since the last delivery,
// none was made yet (the merger waits for a first snapshot), or the merger
// refused some (a name another source held may be free now). A rescan
// that found nothing new costs the merger nothing.
func (s *ManifestPath) deliverChanges() {
	if s.changed || !s.delivered || s.merger.Rejecting(FileSource) {
		s.deliver()
	}
	s.changed, s.delivered = false, true
}

// deliver hands every known file's pods, in path order, to the merger.
func (s *ManifestPath) deliver() {
	s.order = s.order[:0]
	for path := range s.files {
		s.order = append(s.order, path)
	}
	slices.Sort(s.order)
	clear(s.snapshot)
	s.snapshot = s.snapshot[:0]
	for _, path := range s.order {
		s.snapshot = append(s.snapshot, s.files[path].pods...)
	}
	s.merger.Set(FileSource, s.snapshot)
}

func stampOf(info fs.FileInfo) fileStamp {
	st := fileStamp{size: info.Size(), mtime: info.ModTime().UnixNano()}
	if sys, ok := info.Sys().(*syscall.Stat_t); ok {
		st.ctime = sys.Ctim.Nano()
		st.ino, st.dev = sys.Ino, uint64(sys.Dev)
	}
	return st
}
