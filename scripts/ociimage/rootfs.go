package main

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"
)

// epoch stamps every layer entry so that the layer digest depends only on
// content. Zero would do, but some tools treat a zero mtime as "unset".
var epoch = time.Unix(1, 0).UTC()

type entryKind int

const (
	kindDir entryKind = iota
	kindFile
	kindLink
)

// entry is one path of the root filesystem, relative, without a leading "/".
type entry struct {
	path   string
	kind   entryKind
	mode   int64
	src    string // kindFile: host file to copy
	target string // kindLink
}

func parseEntries(files, dirs, links []string) ([]entry, error) {
	byPath := map[string]entry{}
	add := func(e entry) error {
		e.path = strings.Trim(path.Clean("/"+e.path), "/")
		if e.path == "" {
			return fmt.Errorf("entry for the root directory is not allowed")
		}
		if _, dup := byPath[e.path]; dup {
			return fmt.Errorf("%s given twice", e.path)
		}
		byPath[e.path] = e
		return nil
	}
	for _, d := range dirs {
		p, modeStr, hasMode := strings.Cut(d, ":")
		mode := int64(0o755)
		if hasMode {
			m, err := strconv.ParseInt(modeStr, 8, 32)
			if err != nil {
				return nil, fmt.Errorf("-dir %s: mode: %w", d, err)
			}
			mode = m
		}
		if err := add(entry{path: p, kind: kindDir, mode: mode}); err != nil {
			return nil, err
		}
	}
	for _, f := range files {
		p, src, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("-file %s: want PATH=SRC", f)
		}
		st, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("-file %s: %w", f, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("-file %s: not a regular file", f)
		}
		e := entry{path: p, kind: kindFile, mode: int64(st.Mode().Perm()), src: src}
		if err := add(e); err != nil {
			return nil, err
		}
	}
	for _, l := range links {
		p, target, ok := strings.Cut(l, "=")
		if !ok {
			return nil, fmt.Errorf("-link %s: want PATH=TARGET", l)
		}
		if err := add(entry{path: p, kind: kindLink, mode: 0o777, target: target}); err != nil {
			return nil, err
		}
	}
	// Parents that were not named become 0755 directories, so a tar reader
	// never has to invent them with whatever mode it likes.
	for p := range byPath {
		for dir := path.Dir(p); dir != "."; dir = path.Dir(dir) {
			if e, ok := byPath[dir]; ok {
				if e.kind != kindDir {
					return nil, fmt.Errorf("%s is inside %s, which is not a directory", p, dir)
				}
				continue
			}
			byPath[dir] = entry{path: dir, kind: kindDir, mode: 0o755}
		}
	}
	entries := make([]entry, 0, len(byPath))
	for _, e := range byPath {
		entries = append(entries, e)
	}
	// Sorting by path puts every directory before what it holds.
	sort.Slice(entries, func(i, j int) bool { return entries[i].path < entries[j].path })
	return entries, nil
}

// writeRootfs writes the entries as an uncompressed layer tar.
func writeRootfs(w io.Writer, entries []entry) error {
	tw := tar.NewWriter(w)
	for _, e := range entries {
		hdr := &tar.Header{
			Name:    e.path,
			Mode:    e.mode,
			ModTime: epoch,
			Format:  tar.FormatPAX,
		}
		switch e.kind {
		case kindDir:
			hdr.Typeflag = tar.TypeDir
			hdr.Name += "/"
		case kindLink:
			hdr.Typeflag = tar.TypeSymlink
			hdr.Linkname = e.target
		case kindFile:
			hdr.Typeflag = tar.TypeReg
		}
		if err := writeEntry(tw, hdr, e); err != nil {
			return fmt.Errorf("add %s: %w", e.path, err)
		}
	}
	return tw.Close()
}

func writeEntry(tw *tar.Writer, hdr *tar.Header, e entry) error {
	if e.kind != kindFile {
		return tw.WriteHeader(hdr)
	}
	f, err := os.Open(e.src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	hdr.Size = st.Size()
	if err := tw.WriteHeader(hdr); err != nil {
		return err
	}
	n, err := io.Copy(tw, f)
	if err == nil && n != hdr.Size {
		err = fmt.Errorf("%s changed size while read", e.src)
	}
	return err
}
