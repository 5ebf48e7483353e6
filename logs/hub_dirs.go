package logs

import (
	"fmt"
	"os"
)

// dirWatch is a watched directory's followers, by the base name of the
// file each follows.
type dirWatch struct {
	files map[string]map[*interest]struct{}
	// id is the directory watched: a pod's directory removed and made
	// again is another one, to be watched again.
	id os.FileInfo
}

// watchDir returns dir's entry, watching dir first if no follower does
// yet. h.mu is held.
func (h *Hub) watchDir(dir string) (*dirWatch, error) {
	// Writers of dirs hold mu: reading it needs no more.
	d := h.dirs[dir]
	// Looked at before it is watched: should the directory be replaced in
	// between, the next follower watches it again.
	id, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	if d != nil && os.SameFile(id, d.id) {
		return d, nil
	}
	// Watching the directory, not the file, sees the new file of a
	// rotation appear.
	if err := h.run.w.Add(dir); err != nil {
		return nil, fmt.Errorf("watch %s: %w", dir, err)
	}
	h.subs.Lock()
	defer h.subs.Unlock()
	if d != nil {
		// Its followers are left in the old one: what happened in the new
		// one went untold.
		d.id = id
		h.notifyDir(d, newsLook)
		return d, nil
	}
	d = &dirWatch{files: make(map[string]map[*interest]struct{}), id: id}
	if h.dirs == nil {
		h.dirs = make(map[string]*dirWatch)
	}
	h.dirs[dir] = d
	return d, nil
}

// add adds a follower. h.subs is held.
func (d *dirWatch) add(in *interest) {
	if d.files[in.base] == nil {
		d.files[in.base] = make(map[*interest]struct{})
	}
	d.files[in.base][in] = struct{}{}
}

// remove removes a follower and reports whether none is left. h.subs is
// held.
func (d *dirWatch) remove(in *interest) (empty bool) {
	delete(d.files[in.base], in)
	if len(d.files[in.base]) == 0 {
		delete(d.files, in.base)
	}
	return len(d.files) == 0
}

// notifyDir wakes every follower of d. h.subs is held.
func (h *Hub) notifyDir(d *dirWatch, news uint32) {
	for _, ins := range d.files {
		for in := range ins {
			h.notify(in, news)
		}
	}
}
