package pullrecords

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"

	"github.com/podline/podline/credentials"
)

// The store's files: read once by Open, then written whenever memory
// changes, so that what is on disk is what a restart should find.

func (s *Store) loadIntents() error {
	return s.eachFile(s.pullingDir, func(name string, b []byte) error {
		in, err := decodeIntent(b)
		if err != nil {
			return err
		}
		key := canonical(in.Image)
		if s.intents[key] == nil {
			if ref, err := credentials.ParseReference(key); err == nil {
				s.countIntentLocked(ref.Repository(), 1)
			}
		}
		s.intents[key] = &intent{leftover: true, file: name}
		return nil
	})
}

func (s *Store) loadRecords() error {
	return s.eachFile(s.pulledDir, func(name string, b []byte) error {
		r, err := decodeRecord(b)
		if err != nil {
			s.unreadable[name] = true
			return err
		}
		if name != fileName(r.ImageRef) {
			// The kubelet takes such a file for no record of the image.
			return fmt.Errorf("%w: it holds image %s, whose file is %s", ErrBadFile, r.ImageRef, fileName(r.ImageRef))
		}
		s.records[r.ImageRef] = r
		return nil
	})
}

// eachFile reads every record file of dir; temporary files are removed.
// A file that fn refuses is logged and skipped.
func (s *Store) eachFile(dir string, fn func(name string, b []byte) error) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("image pull records: %w", err)
	}
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		switch {
		case e.IsDir():
			continue
		case !isRecordFile(name):
			if filepath.Ext(name) == tmpSuffix {
				// A write a crash cut short: the file it was to replace
				// is whole.
				if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
					s.log.Warn("cannot remove a temporary image pull record", "file", path, "err", err)
				}
			}
			continue
		}
		b, err := readSmall(path)
		if err == nil {
			err = fn(name, b)
		}
		if err != nil {
			s.log.Warn("image pull record not read; its image will be verified", "file", path, "err", err)
		}
	}
	return nil
}

// merge adds creds for repo to the record of imageRef, and writes the
// record if that changed it.
func (s *Store) merge(imageRef, repo string, creds *kubeletv1alpha1.ImagePullCredentials) error {
	s.mu.Lock()
	rec, changed := mergeCredentials(s.records[imageRef], imageRef, repo, creds, s.now())
	if changed {
		s.records[imageRef] = rec
	}
	s.mu.Unlock()
	if !changed {
		return nil
	}
	return s.persistRecord(imageRef)
}

// persistRecord writes the record of imageRef as it is in memory now.
func (s *Store) persistRecord(imageRef string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	name := fileName(imageRef)
	s.mu.RLock()
	rec := s.records[imageRef]
	s.mu.RUnlock()
	var err error
	if rec == nil {
		err = removeDurably(s.pulledDir, name)
	} else {
		err = writeAtomic(s.pulledDir, name, encodeRecord(rec))
	}
	if err != nil {
		writeErrors.Inc()
		return err
	}
	s.mu.Lock()
	delete(s.unreadable, name)
	s.mu.Unlock()
	s.updateGauges()
	return nil
}

// persistIntent makes the intent file of image (a canonical name) match
// memory: present while a pull is under way or a leftover waits, absent
// otherwise.
func (s *Store) persistIntent(image string) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	s.mu.RLock()
	it := s.intents[image]
	var want bool
	var file string
	if it != nil {
		want, file = it.wanted(), it.file
	}
	s.mu.RUnlock()
	var err error
	switch {
	case want && file == "":
		file = fileName(image)
		if err = writeAtomic(s.pullingDir, file, encodeIntent(image)); err != nil {
			file = ""
		}
	case !want && file != "":
		if err = removeDurably(s.pullingDir, file); err == nil {
			file = ""
		}
	}
	s.mu.Lock()
	if it := s.intents[image]; it != nil {
		it.file = file
		if !it.wanted() && it.file == "" {
			delete(s.intents, image)
		}
	}
	s.mu.Unlock()
	if err != nil {
		writeErrors.Inc()
		return err
	}
	s.updateGauges()
	return nil
}
