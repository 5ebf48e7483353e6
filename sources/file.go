package sources

import (
	"context"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
	v1 "k8s.io/api/core/v1"
)

const (
	// DefaultFileCheckPeriod is kubelet's --file-check-frequency default.
	DefaultFileCheckPeriod = 20 * time.Second
	// fileDebounce collapses the burst of events one save produces (editors
	// write, rename and chmod) into one rescan, yet keeps reaction quick.
	fileDebounce = 75 * time.Millisecond
	// fullStatEvery is how many periods pass between rescans that stat
	// every manifest (at the default period, five minutes).
	fullStatEvery = 15
)

// ManifestPath is the FileSource: it reads static pod manifests from a
// directory or a single file, with kubelet's --pod-manifest-path rules: in a
// directory every regular file (symlinks followed) whose name does not start
// with "." is a manifest; subdirectories are ignored. An inotify event
// has the files it names looked at again (the whole directory for an
// event about the directory or a dot-file, or lost events); every period
// the directory is listed again. Each look hands the full set of pods to
// the Merger.
//
// A file that cannot be read, decoded or validated is logged with its path
// and the offending field, and the pods it last defined stay until it is
// fixed or removed: a half-saved edit must not stop a running pod.
type ManifestPath struct {
	path     string
	nodeName string
	period   time.Duration
	merger   *Merger
	log      *slog.Logger

	mu   sync.Mutex
	errs map[string]error // path → last error; guarded by mu

	// newWatcher is fsnotify.NewWatcher; a test's hook to meet the inotify
	// instance limit.
	newWatcher func() (*fsnotify.Watcher, error)

	// The rest belongs to the goroutine that runs Run.
	watcher  *fsnotify.Watcher
	watching string
	// unwatched: inotify failed (no instance, or the watch was refused), so
	// only the periodic rescans find changes; logged once per episode.
	unwatched bool
	files     map[string]*manifestFile
	order     []string  // manifest paths of the current scan, sorted
	snapshot  []*v1.Pod // reused: Merger.Set does not keep it
	gen       uint64
	missing   bool
	// changed: a scan since the last delivery changed some file's pods;
	// delivered: a first delivery was made.
	changed, delivered bool
}

// manifestFile caches one file by its stat stamp, so an unchanged file is
// never read again.
type manifestFile struct {
	stamp  fileStamp
	loaded bool
	// plain: a regular file, not a symlink, with one link, when last
	// stat'ed; what inotify on the directory tells all changes of.
	plain bool
	pods  []*v1.Pod // last good pods, already static, defaulted and valid
	err   error
	gen   uint64 // last scan that listed the file
}

// fileStamp changes whenever the content may have: a write moves mtime and
// ctime, an atomic rename-over changes the inode.
type fileStamp struct {
	size, mtime, ctime int64
	ino, dev           uint64
}

// NewFileSource makes a file source; period <= 0 means
// DefaultFileCheckPeriod. merger must have FileSource registered.
func NewFileSource(path, nodeName string, period time.Duration, merger *Merger, log *slog.Logger) *ManifestPath {
	if period <= 0 {
		period = DefaultFileCheckPeriod
	}
	// An absolute path keeps static pod UIDs, which hash the file's path,
	// independent of the working directory.
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return &ManifestPath{
		path: filepath.Clean(path), nodeName: nodeName, period: period, merger: merger,
		log:        log.With("source", FileSource),
		errs:       make(map[string]error),
		files:      make(map[string]*manifestFile),
		newWatcher: fsnotify.NewWatcher,
	}
}

// Errors returns a copy of the last error of every manifest that is
// currently bad, keyed by file path.
func (s *ManifestPath) Errors() map[string]error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.errs)
}

// Run scans at once, then on changes and every period, until ctx is done.
// A Set blocked on a lagging consumer is released by Merger.Close.
func (s *ManifestPath) Run(ctx context.Context) {
	var events <-chan fsnotify.Event
	var watchErrs <-chan error
	// Without an inotify instance (fs.inotify.max_user_instances reached)
	// each period tries again: the limit is the user's, and another
	// process may free an instance.
	startWatcher := func() {
		w, err := s.newWatcher()
		if err != nil {
			s.degraded("inotify unavailable; manifests are only rescanned periodically "+
				"(raise fs.inotify.max_user_instances)", "err", err)
			return
		}
		s.watcher = w
		events, watchErrs = w.Events, w.Errors
	}
	startWatcher()
	defer func() {
		if s.watcher != nil {
			s.watcher.Close()
		}
	}()
	s.scan(statAll)

	ticker := time.NewTicker(s.period)
	defer ticker.Stop()
	debounce := time.NewTimer(fileDebounce)
	debounce.Stop()
	var (
		fire    <-chan time.Time // nil while no rescan is pending
		names   = map[string]struct{}{}
		whole   bool // the pending rescan must list the directory
		periods int
	)
	var lastScan time.Time
	pending := func() {
		if fire == nil {
			debounce.Reset(fileDebounce)
			fire = debounce.C
		}
	}
	rescan := func() {
		if whole || !s.incremental() {
			s.scan(statAll)
		} else {
			s.scanNames(names)
		}
		clear(names)
		whole = false
		lastScan = time.Now()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !s.relevant(ev) {
				continue
			}
			name, ok := s.child(ev.Name)
			if ok {
				names[name] = struct{}{}
			} else {
				whole = true
			}
			if ok && s.prompt(ev, name, time.Since(lastScan)) {
				// A rescan the debounce holds (the temporary file the
				// manifest was written to, a dot-file) goes with it.
				if fire != nil {
					debounce.Stop()
					fire = nil
				}
				rescan()
				continue
			}
			pending()
		case err, ok := <-watchErrs:
			if !ok {
				watchErrs = nil
				continue
			}
			// Usually a queue overflow: events were lost, so look again.
			s.log.Warn("inotify error; rescanning", "err", err)
			whole = true
			pending()
		case <-fire:
			fire = nil
			rescan()
		case <-ticker.C:
			if s.watcher == nil {
				startWatcher() // the scan below adds the watch
			}
			// Every fullStatEvery-th period stats every file, for what
			// inotify cannot see: a write through a hard link made
			// after the file was last stat'ed.
			periods++
			if periods%fullStatEvery == 0 {
				s.scan(statAll)
			} else {
				s.scan(statUntrusted)
			}
		}
	}
}

// prompt says whether an event is read at once instead of after the
// debounce: a manifest that appeared under a new name (written elsewhere
// and renamed in, or created) when nothing was scanned for a debounce
// period. A pod added alone then starts without waiting out the debounce,
// as the kubelet reads each event at once; a burst of new manifests is
// still read in one rescan after the first, and an edit of a known file
// (editors write, rename and chmod) still waits for its burst to end.
func (s *ManifestPath) prompt(ev fsnotify.Event, name string, sinceScan time.Duration) bool {
	if !ev.Has(fsnotify.Create) || sinceScan < fileDebounce {
		return false
	}
	_, known := s.files[filepath.Join(s.path, name)]
	return !known
}

// relevant filters events: in a directory any change counts (also to
// dot-files, since a "..data" symlink swap retargets the manifests); for a
// single file only that file's.
func (s *ManifestPath) relevant(ev fsnotify.Event) bool {
	return s.watching == s.path || ev.Name == s.path
}

func (s *ManifestPath) setErr(path string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		delete(s.errs, path)
	} else {
		s.errs[path] = err
	}
}

// ensureWatch points the inotify watch at target ("" for none). A watch
// that the kernel dropped (directory deleted or moved) is added again.
func (s *ManifestPath) ensureWatch(target string) {
	if s.watcher == nil {
		return
	}
	if s.watching != "" && s.watching != target {
		_ = s.watcher.Remove(s.watching) // may already be gone with its directory
		s.watching = ""
	}
	if target == "" || (s.watching == target && slices.Contains(s.watcher.WatchList(), target)) {
		return
	}
	if err := s.watcher.Add(target); err != nil {
		s.degraded("cannot watch manifest path; relying on periodic rescans "+
			"(at the limit: raise fs.inotify.max_user_watches)", "path", target, "err", err)
		s.watching = ""
		return
	}
	if s.unwatched {
		s.log.Info("watching manifest path again", "path", target)
		s.unwatched = false
		fileUnwatched.Set(0)
	}
	s.watching = target
}

// degraded records that only the periodic rescans find changes, logging
// it once per episode rather than every period.
func (s *ManifestPath) degraded(msg string, args ...any) {
	if s.unwatched {
		return
	}
	s.unwatched = true
	fileUnwatched.Set(1)
	s.log.Warn(msg, append(args, "period", s.period)...)
}
