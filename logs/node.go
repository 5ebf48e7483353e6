package logs

import (
	"errors"
	"fmt"
	"html"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// errEscapes marks a request path that leaves the served directory.
var errEscapes = errors.New("leaves the node's log directory")

// NodeLogs serves root (the node's /var/log) as the kubelet's /logs/
// does: a directory as a page of links, a file as its content, with
// Range and conditional requests.
//
// The handler takes the path below /logs: mount it as
// http.StripPrefix("/logs", NodeLogs(root)), so /logs/ arrives as "/" and
// /logs/pods/x as "/pods/x" (a path without the leading '/', as
// StripPrefix("/logs/") leaves it, is taken the same).
//
// Unlike http.Dir, which follows symlinks anywhere, every lookup is one
// openat2 confined beneath root: /var/log holds directories that pods
// write through hostPath volumes, and a symlink planted there
// (x -> /etc) must not hand the node's files to whoever may read logs.
// The kernel decides at open time, so swapping a symlink in after a
// check gains nothing. Links that stay inside root are followed.
//
// What the lookup finds is opened only if it is a regular file or a
// directory: a FIFO, a device node or a socket a pod made there is a 403
// that says what it is, and is never opened (see open.go).
func NodeLogs(root string) http.Handler { return nodeLogs{root: root} }

type nodeLogs struct{ root string }

func (h nodeLogs) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	rel := strings.TrimPrefix(r.URL.Path, "/")
	for _, part := range strings.Split(rel, "/") {
		if part == ".." {
			// Refused by name, even when it would stay inside: the
			// answer should say why, not look like a missing file.
			http.Error(w, fmt.Sprintf("%q: %v", r.URL.Path, errEscapes), http.StatusForbidden)
			return
		}
	}
	name := strings.TrimPrefix(path.Clean("/"+rel), "/")
	if name == "" {
		name = "."
	}
	l, err := lookupBeneath(h.root, name)
	if err != nil {
		nodeLogError(w, name, err)
		return
	}
	defer l.close()
	switch {
	case l.isDir() && rel != "" && !strings.HasSuffix(rel, "/"):
		// The listing's links are relative to the directory: its URL
		// must end in '/' for them to resolve inside it.
		w.Header().Set("Location", (&url.URL{Path: path.Base(rel) + "/"}).String())
		w.WriteHeader(http.StatusMovedPermanently)
	case l.isDir():
		d, err := l.open(unix.O_DIRECTORY)
		if err != nil {
			nodeLogError(w, name, err)
			return
		}
		defer d.Close()
		list(w, d, name)
	case l.isRegular():
		f, err := l.open(0)
		if err != nil {
			nodeLogError(w, name, err)
			return
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			nodeLogError(w, name, err)
			return
		}
		http.ServeContent(w, r, st.Name(), st.ModTime(), f)
	default:
		// http.FileServer, the kubelet's, would open it: a FIFO hangs
		// the request, a device is read as root. Refused unopened, as
		// forbidden rather than missing, saying what is there.
		nodeLogError(w, name, l.notRegular())
	}
}

func nodeLogError(w http.ResponseWriter, name string, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, errEscapes), errors.Is(err, fs.ErrPermission), errors.Is(err, ErrNotRegular):
		code = http.StatusForbidden
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, unix.ENOTDIR):
		code = http.StatusNotFound
	case errors.Is(err, unix.EINVAL):
		code = http.StatusBadRequest
	}
	http.Error(w, fmt.Sprintf("%q: %v", name, err), code)
}

// lookupBeneath looks name up without leaving root, opening nothing: a
// "..", an absolute symlink or a relative one climbing out fails in the
// kernel (EXDEV), and /proc magic links (ELOOP) could point anywhere.
func lookupBeneath(root, name string) (*looked, error) {
	dirfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open log directory: %w", err)
	}
	defer unix.Close(dirfd)
	l, err := lookup(dirfd, name, unix.RESOLVE_BENEATH|unix.RESOLVE_NO_MAGICLINKS)
	switch {
	case errors.Is(err, unix.EXDEV), errors.Is(err, unix.ELOOP):
		return nil, errEscapes
	case err != nil:
		return nil, err
	}
	return l, nil
}

// list writes the directory as http.FileServer does, so what reads the
// kubelet's listing reads this one.
func list(w http.ResponseWriter, dir *os.File, name string) {
	entries, err := dir.ReadDir(-1)
	if err != nil {
		nodeLogError(w, name, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<!doctype html>\n<meta name=\"viewport\" content=\"width=device-width\">\n<pre>\n")
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() {
			n += "/"
		}
		// A URL with only a path, so a name with ':' is not a scheme.
		href := (&url.URL{Path: n}).String()
		fmt.Fprintf(&b, "<a href=\"%s\">%s</a>\n", html.EscapeString(href), html.EscapeString(n))
	}
	b.WriteString("</pre>\n")
	w.Write([]byte(b.String()))
}
