package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Media types and annotations of the OCI image spec (v1.1) that containerd
// understands on import.
const (
	mediaIndex     = "application/vnd.oci.image.index.v1+json"
	mediaManifest  = "application/vnd.oci.image.manifest.v1+json"
	mediaConfig    = "application/vnd.oci.image.config.v1+json"
	mediaLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip"
	// containerd names an imported image after this annotation.
	annotationContainerdName = "io.containerd.image.name"
	annotationRefName        = "org.opencontainers.image.ref.name"
	// Fixed so the config, and with it the digest, does not depend on when
	// the image was built.
	createdAt = "1970-01-01T00:00:01Z"
)

type imageSpec struct {
	refs    []string
	entries []entry
	config  execConfig
}

type execConfig struct {
	Env        []string `json:"Env,omitempty"`
	Entrypoint []string `json:"Entrypoint,omitempty"`
	Cmd        []string `json:"Cmd,omitempty"`
	WorkingDir string   `json:"WorkingDir,omitempty"`
	User       string   `json:"User,omitempty"`
}

type descriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Platform    *platform         `json:"platform,omitempty"`
}

type platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
}

// blob is one content-addressed file under blobs/sha256.
type blob struct {
	digest string
	data   []byte
}

func newBlob(data []byte) blob {
	sum := sha256.Sum256(data)
	return blob{digest: "sha256:" + hex.EncodeToString(sum[:]), data: data}
}

func (b blob) descriptor(mediaType string) descriptor {
	return descriptor{MediaType: mediaType, Digest: b.digest, Size: int64(len(b.data))}
}

// buildBlobs makes the layer, config and manifest blobs and the index.
func buildBlobs(spec *imageSpec) (index []byte, blobs []blob, manifestDigest string, err error) {
	var rootfs bytes.Buffer
	if err := writeRootfs(&rootfs, spec.entries); err != nil {
		return nil, nil, "", fmt.Errorf("layer: %w", err)
	}
	diffID := newBlob(rootfs.Bytes()).digest

	var gz bytes.Buffer
	// No name and a zero mtime in the gzip header keep the bytes stable.
	zw, err := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	if err != nil {
		return nil, nil, "", err
	}
	if _, err := zw.Write(rootfs.Bytes()); err != nil {
		return nil, nil, "", err
	}
	if err := zw.Close(); err != nil {
		return nil, nil, "", err
	}
	layer := newBlob(gz.Bytes())

	plat := platform{Architecture: runtime.GOARCH, OS: "linux"}
	config, err := json.Marshal(map[string]any{
		"created":      createdAt,
		"architecture": plat.Architecture,
		"os":           plat.OS,
		"config":       spec.config,
		"rootfs":       map[string]any{"type": "layers", "diff_ids": []string{diffID}},
		"history":      []map[string]string{{"created": createdAt, "created_by": "podline scripts/ociimage"}},
	})
	if err != nil {
		return nil, nil, "", err
	}
	configBlob := newBlob(config)

	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaManifest,
		"config":        configBlob.descriptor(mediaConfig),
		"layers":        []descriptor{layer.descriptor(mediaLayerGzip)},
	})
	if err != nil {
		return nil, nil, "", err
	}
	manifestBlob := newBlob(manifest)

	// One index entry per name: containerd creates one image record for
	// each, all pointing at the same manifest.
	var entries []descriptor
	for _, ref := range spec.refs {
		d := manifestBlob.descriptor(mediaManifest)
		d.Platform = &plat
		d.Annotations = map[string]string{
			annotationContainerdName: ref,
			annotationRefName:        refTag(ref),
		}
		entries = append(entries, d)
	}
	index, err = json.Marshal(map[string]any{
		"schemaVersion": 2,
		"mediaType":     mediaIndex,
		"manifests":     entries,
	})
	if err != nil {
		return nil, nil, "", err
	}
	return index, []blob{layer, configBlob, manifestBlob}, manifestBlob.digest, nil
}

// refTag returns the tag of a reference like docker.io/library/busybox:1.36.
func refTag(ref string) string {
	if i := strings.LastIndexByte(ref, ':'); i > strings.LastIndexByte(ref, '/') {
		return ref[i+1:]
	}
	return "latest"
}

// writeLayout writes the OCI layout tar to path atomically and returns the
// manifest digest.
func writeLayout(path string, spec *imageSpec) (string, error) {
	index, blobs, digest, err := buildBlobs(spec)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".ociimage-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if err := writeLayoutTar(tmp, index, blobs); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	return digest, os.Rename(tmp.Name(), path)
}

func writeLayoutTar(w io.Writer, index []byte, blobs []blob) error {
	tw := tar.NewWriter(w)
	add := func(name string, data []byte, typ byte, mode int64) error {
		hdr := &tar.Header{Name: name, Typeflag: typ, Mode: mode, ModTime: epoch, Size: int64(len(data)), Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`), tar.TypeReg, 0o644); err != nil {
		return err
	}
	if err := add("index.json", index, tar.TypeReg, 0o644); err != nil {
		return err
	}
	for _, dir := range []string{"blobs/", "blobs/sha256/"} {
		if err := add(dir, nil, tar.TypeDir, 0o755); err != nil {
			return err
		}
	}
	for _, b := range blobs {
		name := "blobs/sha256/" + strings.TrimPrefix(b.digest, "sha256:")
		if err := add(name, b.data, tar.TypeReg, 0o644); err != nil {
			return err
		}
	}
	return tw.Close()
}
