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

// scan lists the manifests, reloads the changed ones and delivers the full
// set. When the path itself cannot be read (other than not existing) it
// delivers nothing, keeping the current pods.
func (s *ManifestPath) scan() {
	fileScans.Inc()
	s.gen++
	s.order = s.order[:0]
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
		if !s.scanDir() {
			return
		}
	default:
		s.foundPath()
		s.ensureWatch(filepath.Dir(s.path))
		if info.Mode().IsRegular() {
			s.scanFile(s.path, info)
		}
	}
	s.deliver()
}

func (s *ManifestPath) foundPath() {
	if s.missing {
		s.log.Info("manifest path appeared", "path", s.path)
		s.missing = false
	}
}

func (s *ManifestPath) scanDir() bool {
	f, err := os.Open(s.path)
	if err != nil {
		s.log.Error("cannot list manifest directory; keeping current static pods", "path", s.path, "err", err)
		return false
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil {
		s.log.Error("cannot list manifest directory; keeping current static pods", "path", s.path, "err", err)
		return false
	}
	slices.Sort(names)
	for _, name := range names {
		if strings.HasPrefix(name, ".") {
			continue
		}
		full := filepath.Join(s.path, name)
		info, err := os.Stat(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// Removed since the listing, or a dangling symlink: not there.
		case err != nil:
			s.keepOnError(full, newClassError(ErrFetch, err.Error(), err))
		case info.Mode().IsRegular():
			s.scanFile(full, info)
		}
	}
	return true
}

func (s *ManifestPath) entry(path string) *manifestFile {
	e := s.files[path]
	if e == nil {
		e = &manifestFile{}
		s.files[path] = e
	}
	e.gen = s.gen
	s.order = append(s.order, path)
	return e
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
	data, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, newClassError(ErrFetch, err.Error(), err)
	}
	if len(data) > maxManifestBytes {
		return nil, newClassError(ErrFetch, fmt.Sprintf("larger than %d bytes", maxManifestBytes), nil)
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

// deliver forgets files that are gone and hands the scan's pods, in path
// order, to the merger.
func (s *ManifestPath) deliver() {
	for path, e := range s.files {
		if e.gen != s.gen {
			delete(s.files, path)
			s.setErr(path, nil)
		}
	}
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
