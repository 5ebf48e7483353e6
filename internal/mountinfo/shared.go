package mountinfo

import (
	"sync"
	"time"
)

// sharedAge is how long one reading of the mount table serves the callers
// that follow. The table grows with the pods (most have a tmpfs for their
// token or secrets), so a reading per pod teardown made deleting n pods
// cost n² in the kernel: at 10,000 pods a table of a megabyte and more,
// read 10,000 times.
const sharedAge = 500 * time.Millisecond

// table is the mount table as last read.
type table struct {
	read func() ([]Entry, error)
	now  func() time.Time

	mu      sync.Mutex
	at      time.Time
	entries []Entry
}

var shared = &table{read: Read, now: time.Now}

// ReadShared returns the mount table as read at most half a second ago,
// or since the last Changed. What this process mounts and unmounts it
// reports with Changed, so a reading is only ever behind on mounts made
// by others (a container's mount propagated to the host), by at most
// that half second. Callers must not modify the entries.
func ReadShared() ([]Entry, error) { return shared.get() }

// Changed says this process mounted or unmounted something: the next
// ReadShared reads the table again.
func Changed() { shared.drop() }

func (m *table) get() ([]Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.entries != nil && m.now().Sub(m.at) < sharedAge {
		return m.entries, nil
	}
	entries, err := m.read()
	if err != nil {
		return nil, err
	}
	if entries == nil {
		entries = []Entry{}
	}
	m.entries, m.at = entries, m.now()
	return entries, nil
}

func (m *table) drop() {
	m.mu.Lock()
	m.entries = nil
	m.mu.Unlock()
}
