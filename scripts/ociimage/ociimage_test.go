package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readLayout returns every file of an OCI layout tar by name.
func readLayout(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[hdr.Name] = data
	}
}

func blobOf(t *testing.T, files map[string][]byte, digest string) []byte {
	t.Helper()
	data, ok := files["blobs/sha256/"+strings.TrimPrefix(digest, "sha256:")]
	if !ok {
		t.Fatalf("blob %s missing", digest)
	}
	sum := sha256.Sum256(data)
	if got := "sha256:" + hex.EncodeToString(sum[:]); got != digest {
		t.Fatalf("blob %s has digest %s", digest, got)
	}
	return data
}

func TestLayout(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "tool")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho hi\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	build := func(out string) {
		t.Helper()
		err := run([]string{"-out", out, "-ref", "example.test/a:1", "-ref", "example.test/a:2",
			"-file", "usr/bin/tool=" + bin, "-link", "bin/sh=/usr/bin/tool", "-dir", "tmp:1777",
			"-cmd", `["sh"]`, "-env", "PATH=/bin"})
		if err != nil {
			t.Fatal(err)
		}
	}
	first, second := filepath.Join(dir, "1.tar"), filepath.Join(dir, "2.tar")
	build(first)
	build(second)
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Fatal("two builds of the same inputs differ")
	}

	files := readLayout(t, first)
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Manifests) != 2 || index.Manifests[1].Annotations[annotationContainerdName] != "example.test/a:2" ||
		index.Manifests[1].Annotations[annotationRefName] != "2" {
		t.Fatalf("index entries: %+v", index.Manifests)
	}
	var manifest struct {
		Config descriptor   `json:"config"`
		Layers []descriptor `json:"layers"`
	}
	if err := json.Unmarshal(blobOf(t, files, index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	var config struct {
		Config execConfig `json:"config"`
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blobOf(t, files, manifest.Config.Digest), &config); err != nil {
		t.Fatal(err)
	}
	if len(config.Config.Cmd) != 1 || config.Config.Cmd[0] != "sh" || config.Config.Env[0] != "PATH=/bin" {
		t.Fatalf("config: %+v", config.Config)
	}

	zr, err := gzip.NewReader(bytes.NewReader(blobOf(t, files, manifest.Layers[0].Digest)))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(layer)
	if diffID := "sha256:" + hex.EncodeToString(sum[:]); config.RootFS.DiffIDs[0] != diffID {
		t.Fatalf("diff id %s, layer has %s", config.RootFS.DiffIDs[0], diffID)
	}
	var got []string
	tr := tar.NewReader(bytes.NewReader(layer))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, hdr.Name+" "+hdr.FileInfo().Mode().String()+" "+hdr.Linkname)
	}
	want := []string{
		"bin/ drwxr-xr-x ", "bin/sh Lrwxrwxrwx /usr/bin/tool", "tmp/ dtrwxrwxrwx ",
		"usr/ drwxr-xr-x ", "usr/bin/ drwxr-xr-x ", "usr/bin/tool -rwxr-xr-x ",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("layer entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseEntriesErrors(t *testing.T) {
	f := func(files, dirs, links []string) {
		t.Helper()
		if _, err := parseEntries(files, dirs, links); err == nil {
			t.Fatalf("files %v dirs %v links %v: want an error", files, dirs, links)
		}
	}
	f(nil, []string{"tmp", "/tmp/"}, nil)                  // same path twice
	f(nil, []string{"tmp:99"}, nil)                        // not an octal mode
	f([]string{"bin/x"}, nil, nil)                         // no source
	f([]string{"bin/x=/nonexistent/podline"}, nil, nil)    // missing source
	f(nil, nil, []string{"bin=busybox", "bin/sh=busybox"}) // inside a symlink
	f(nil, []string{"/"}, nil)                             // the root itself
}
