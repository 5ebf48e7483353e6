package mountinfo

import (
	"errors"
	"testing"
	"time"
)

func TestSharedReading(t *testing.T) {
	now := time.Unix(100, 0)
	reads := 0
	m := &table{
		now: func() time.Time { return now },
		read: func() ([]Entry, error) {
			reads++
			return []Entry{{Dir: "/x"}}, nil
		},
	}
	for range 3 {
		if e, err := m.get(); err != nil || len(e) != 1 {
			t.Fatalf("get: %v, %v", e, err)
		}
	}
	if reads != 1 {
		t.Fatalf("%d reads for 3 gets within the age, want 1", reads)
	}
	now = now.Add(sharedAge)
	m.get()
	if reads != 2 {
		t.Fatalf("a reading as old as sharedAge was used again")
	}
	m.drop()
	m.get()
	if reads != 3 {
		t.Fatalf("a dropped reading was used again")
	}

	// A failed read is no reading: the next get tries again.
	m.drop()
	m.read = func() ([]Entry, error) { reads++; return nil, errors.New("boom") }
	if _, err := m.get(); err == nil {
		t.Fatal("error not returned")
	}
	m.get()
	if reads != 5 {
		t.Fatalf("%d reads, want 5: an error was kept as a reading", reads)
	}
}
