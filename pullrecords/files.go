package pullrecords

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1alpha1 "k8s.io/kubelet/config/v1alpha1"
	sigsjson "sigs.k8s.io/json"
)

// The kubelet's layout: <dir>/pulling holds an ImagePullIntent per image
// being pulled, <dir>/pulled an ImagePulledRecord per image ID, each file
// named "sha256-" and the hex SHA-256 of the image or ID, 0600 in 0700
// directories.
const (
	pullingDir = "pulling"
	pulledDir  = "pulled"
	filePrefix = "sha256-"
	tmpSuffix  = ".tmp"
	kindIntent = "ImagePullIntent"
	kindRecord = "ImagePulledRecord"
	fileMode   = 0o600
	dirMode    = 0o700
	// maxFileSize bounds what one file may cost to read: a record lists
	// at most learnLimit secrets per repository learned by checks, and
	// its pulls; a megabyte is far beyond that.
	maxFileSize = 1 << 20
)

// ErrBadFile: a record file that does not decode as the kubelet's
// v1alpha1 kind it should hold.
var ErrBadFile = errors.New("invalid image pull record file")

var recordsAPI = kubeletv1alpha1.SchemeGroupVersion.String()

func fileName(key string) string {
	return fmt.Sprintf("%s%x", filePrefix, sha256.Sum256([]byte(key)))
}

// isRecordFile: a file written under its final name; temporary files of a
// write cut short are not.
func isRecordFile(name string) bool {
	return strings.HasPrefix(name, filePrefix) && !strings.HasSuffix(name, tmpSuffix)
}

// encodeIntent and encodeRecord write what the kubelet's JSON serializer
// writes: the object with its kind and apiVersion, on one line.
func encodeIntent(image string) []byte {
	return mustJSON(&kubeletv1alpha1.ImagePullIntent{TypeMeta: typeMeta(kindIntent), Image: image})
}

func encodeRecord(r *kubeletv1alpha1.ImagePulledRecord) []byte {
	c := *r
	c.TypeMeta = typeMeta(kindRecord)
	return mustJSON(&c)
}

func typeMeta(kind string) metav1.TypeMeta {
	return metav1.TypeMeta{Kind: kind, APIVersion: recordsAPI}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("BUG: an image pull record did not marshal: " + err.Error())
	}
	return append(b, '\n')
}

// decodeIntent and decodeRecord read strictly, as the kubelet does: an
// unknown field, another kind or version is an invalid file.
func decodeIntent(b []byte) (*kubeletv1alpha1.ImagePullIntent, error) {
	var in kubeletv1alpha1.ImagePullIntent
	if err := decodeStrict(b, &in, &in.TypeMeta, kindIntent); err != nil {
		return nil, err
	}
	return &in, nil
}

func decodeRecord(b []byte) (*kubeletv1alpha1.ImagePulledRecord, error) {
	var r kubeletv1alpha1.ImagePulledRecord
	if err := decodeStrict(b, &r, &r.TypeMeta, kindRecord); err != nil {
		return nil, err
	}
	r.TypeMeta = metav1.TypeMeta{}
	return &r, nil
}

func decodeStrict(b []byte, into any, tm *metav1.TypeMeta, kind string) error {
	strict, err := sigsjson.UnmarshalStrict(b, into)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	if len(strict) > 0 {
		return fmt.Errorf("%w: %v", ErrBadFile, errors.Join(strict...))
	}
	if tm.Kind != kind || tm.APIVersion != recordsAPI {
		return fmt.Errorf("%w: %s %s, want %s %s", ErrBadFile, tm.APIVersion, tm.Kind, recordsAPI, kind)
	}
	return nil
}

// writeAtomic replaces dir/name with content so that a crash at any
// moment leaves the old file or the new one, never a mix: the content
// goes to a temporary file, which is synced before it is renamed over
// the old one, and the directory after, so the rename outlives a power
// cut. A temporary file a crash left behind is removed by the next Open.
func writeAtomic(dir, name string, content []byte) (err error) {
	f, err := os.CreateTemp(dir, name+".*"+tmpSuffix)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if _, err = f.Write(content); err != nil {
		return err
	}
	if err = f.Chmod(fileMode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(f.Name(), filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// removeDurably removes dir/name (absent is fine) and syncs the
// directory.
func removeDurably(dir, name string) error {
	if err := os.Remove(filepath.Join(dir, name)); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// readSmall reads a record file: never through a link nor from anything
// but a regular file (a FIFO planted there would block an open without
// O_NONBLOCK), and no more than maxFileSize.
func readSmall(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: not a regular file", ErrBadFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxFileSize {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrBadFile, maxFileSize)
	}
	return b, nil
}
