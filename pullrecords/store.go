package pullrecords

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
)

// Store holds the node's records of image pulls. Open reads them once;
// from then on they live in memory, and a file is written only when a
// record changes. It is safe for concurrent use.
type Store struct {
	pullingDir, pulledDir string
	policy                *Policy
	log                   *slog.Logger
	now                   func() time.Time

	mu sync.RWMutex
	// records are by image ID. A stored record is never modified: a
	// change stores a new one, so a check reads it after unlocking.
	records map[string]*kubeletv1alpha1.ImagePulledRecord
	// unreadable are the file names of records that could not be read;
	// which image IDs they were for is known only by checking one.
	unreadable map[string]bool
	// intents are by canonical image (credentials.Reference.String()).
	intents map[string]*intent
	// intentsByRepo counts, by repository, the pulls under way and the
	// intents a previous run left that are not settled yet: while one
	// stands, no image of that repository counts as preloaded, even under
	// another tag or a digest, which its own intent does not name.
	intentsByRepo map[string]int

	// writeMu serializes file writes. Each write stores the state in
	// memory at the time it runs, so whatever order writers come in, the
	// last write leaves the latest state on disk.
	writeMu sync.Mutex
}

// intent is the ImagePullIntent of one image.
type intent struct {
	pulls int // under way in this process
	// leftover: on disk from before a restart, its image not on the node
	// then, or left by a pull whose outcome the runtime could not tell;
	// the next pull of the image ends it, as the kubelet's does.
	leftover bool
	// file is the name it has on disk, "" when none.
	file string
}

func (it *intent) wanted() bool { return it.pulls > 0 || it.leftover }

// Open reads the records under dir (<root-dir>/image_manager), making its
// directories if they are missing, and removes the temporary files of
// writes a crash cut short. A file that cannot be read is logged and
// leaves its image to be verified; it never stops podline.
func Open(dir string, policy *Policy, log *slog.Logger) (*Store, error) {
	s := &Store{
		pullingDir: filepath.Join(dir, pullingDir), pulledDir: filepath.Join(dir, pulledDir),
		policy: policy, log: log, now: time.Now,
		records: map[string]*kubeletv1alpha1.ImagePulledRecord{}, unreadable: map[string]bool{},
		intents: map[string]*intent{}, intentsByRepo: map[string]int{},
	}
	for _, d := range []string{s.pullingDir, s.pulledDir} {
		if err := os.MkdirAll(d, dirMode); err != nil {
			return nil, fmt.Errorf("image pull records: %w", err)
		}
	}
	if err := s.loadIntents(); err != nil {
		return nil, err
	}
	if err := s.loadRecords(); err != nil {
		return nil, err
	}
	s.updateGauges()
	return s, nil
}

// Policy is the verification policy the store checks with.
func (s *Store) Policy() *Policy { return s.policy }

// canonical is the fully qualified form of image ("busybox" is
// docker.io/library/busybox:latest), so that one image has one intent
// whichever way pods spell it; a name that does not parse stays as is.
func canonical(image string) string {
	if ref, err := credentials.ParseReference(image); err == nil {
		return ref.String()
	}
	return image
}

// countIntentLocked adds n to the intents that stand for repo.
func (s *Store) countIntentLocked(repo string, n int) {
	if n += s.intentsByRepo[repo]; n > 0 {
		s.intentsByRepo[repo] = n
	} else {
		delete(s.intentsByRepo, repo)
	}
}

func (s *Store) updateGauges() {
	s.mu.RLock()
	records, onDisk := len(s.records), 0
	for _, it := range s.intents {
		if it.file != "" {
			onDisk++
		}
	}
	s.mu.RUnlock()
	recordsGauge.Set(float64(records))
	intentsGauge.Set(float64(onDisk))
}
