package main

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// fakeRegistry is the part of the distribution API ocipush speaks, behind
// basic auth.
type fakeRegistry struct {
	mu        sync.Mutex
	blobs     map[string][]byte
	manifests map[string][]byte
}

func (r *fakeRegistry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if u, p, ok := req.BasicAuth(); !ok || u != "u" || p != "pw" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	path := strings.TrimPrefix(req.URL.Path, "/v2/private/app/")
	body, _ := io.ReadAll(req.Body)
	switch {
	case req.Method == http.MethodHead && strings.HasPrefix(path, "blobs/sha256:"):
		if _, ok := r.blobs[strings.TrimPrefix(path, "blobs/")]; !ok {
			w.WriteHeader(http.StatusNotFound)
		}
	case req.Method == http.MethodPost && path == "blobs/uploads/":
		w.Header().Set("Location", "/v2/private/app/blobs/uploads/1?_state=x")
		w.WriteHeader(http.StatusAccepted)
	case req.Method == http.MethodPut && path == "blobs/uploads/1":
		d := req.URL.Query().Get("digest")
		if sum := sha256.Sum256(body); "sha256:"+hex.EncodeToString(sum[:]) != d || req.URL.Query().Get("_state") != "x" {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		r.blobs[d] = body
		w.WriteHeader(http.StatusCreated)
	case req.Method == http.MethodPut && strings.HasPrefix(path, "manifests/"):
		r.manifests[strings.TrimPrefix(path, "manifests/")] = body
		w.WriteHeader(http.StatusCreated)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func writeLayout(t *testing.T, path string, blobs map[string][]byte, index []byte) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(f)
	add := func(name string, data []byte) {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg})
		tw.Write(data)
	}
	add("index.json", index)
	for name, data := range blobs {
		add(name, data)
	}
	tw.Close()
	f.Close()
}

func TestPushRelabelled(t *testing.T) {
	reg := &fakeRegistry{blobs: map[string][]byte{}, manifests: map[string][]byte{}}
	srv := httptest.NewTLSServer(reg)
	defer srv.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.crt")
	os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o644)

	files := map[string][]byte{}
	config, _ := json.Marshal(map[string]any{"architecture": "amd64", "os": "linux", "config": map[string]any{"Cmd": []string{"sh"}}})
	layer := []byte("layer bytes")
	cfgDigest, cfgSize := store(files, config)
	layerDigest, layerSize := store(files, layer)
	m, _ := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: cfgDigest, Size: cfgSize},
		"layers": []descriptor{{MediaType: "application/vnd.oci.image.layer.v1.tar+gzip", Digest: layerDigest, Size: layerSize}},
	})
	mDigest, mSize := store(files, m)
	index, _ := json.Marshal(map[string]any{"manifests": []descriptor{{MediaType: "application/vnd.oci.image.manifest.v1+json", Digest: mDigest, Size: mSize}}})
	tarPath := filepath.Join(dir, "image.tar")
	writeLayout(t, tarPath, files, index)

	out := filepath.Join(dir, "out")
	stdout := os.Stdout
	os.Stdout, _ = os.Create(out)
	err := run([]string{"-tar", tarPath, "-registry", strings.TrimPrefix(srv.URL, "https://"), "-repo", "private/app",
		"-tag", "1", "-tag", "latest", "-label", "dev.podline.registry=private/app", "-user", "u:pw", "-cacert", ca})
	os.Stdout.Close()
	os.Stdout = stdout
	if err != nil {
		t.Fatal(err)
	}
	printed, _ := os.ReadFile(out)
	pushed := reg.manifests["1"]
	sum := sha256.Sum256(pushed)
	if got := strings.TrimSpace(string(printed)); got != "sha256:"+hex.EncodeToString(sum[:]) || got == mDigest {
		t.Fatalf("printed %s: want the digest of the relabelled manifest, not the layout's %s", got, mDigest)
	}
	if string(reg.manifests["latest"]) != string(pushed) {
		t.Fatal("the two tags name different manifests")
	}
	var pm manifest
	json.Unmarshal(pushed, &pm)
	if pm.Config.Digest == cfgDigest || string(reg.blobs[layerDigest]) != string(layer) {
		t.Fatalf("pushed manifest %s: want a new config and the same layer", pushed)
	}
	var cfg struct {
		Config struct {
			Cmd    []string
			Labels map[string]string
		} `json:"config"`
	}
	json.Unmarshal(reg.blobs[pm.Config.Digest], &cfg)
	if cfg.Config.Labels["dev.podline.registry"] != "private/app" || len(cfg.Config.Cmd) != 1 {
		t.Fatalf("pushed config %s: want the label added and the rest kept", reg.blobs[pm.Config.Digest])
	}

	// Without the password the registry's refusal names the request.
	err = run([]string{"-tar", tarPath, "-registry", strings.TrimPrefix(srv.URL, "https://"), "-repo", "private/app",
		"-tag", "1", "-user", "u:wrong", "-cacert", ca})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("push with a wrong password: %v", err)
	}
}
