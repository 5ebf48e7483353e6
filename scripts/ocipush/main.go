// Command ocipush pushes the image of an OCI image layout tar (what
// scripts/ociimage writes) to a registry over the distribution API, with
// basic auth and a CA of its own, and prints the manifest digest. The
// harness fills the tests' registry with it: no registry client besides
// the runtime is installed, and the runtime must not hold the images the
// tests pull.
//
// -label adds a label to the image config, which gives the pushed image
// an id of its own: the runtime keys images by config digest, so a pushed
// copy of an image it imported would be one image with the imported one,
// and removing either would remove both.
//
//	ocipush -tar busybox.tar -registry 127.0.0.1:5043 -repo private/busybox \
//	    -tag 1.36 -label dev.podline.registry=test -user podline:secret -cacert ca.crt
package main

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "ocipush: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ocipush", flag.ContinueOnError)
	var tags, labels listFlag
	tarPath := fs.String("tar", "", "OCI image layout tar")
	registry := fs.String("registry", "", "registry host:port")
	repo := fs.String("repo", "", "repository, e.g. private/busybox")
	user := fs.String("user", "", "user:password for basic auth")
	cacert := fs.String("cacert", "", "CA certificate the registry's serving certificate chains to")
	fs.Var(&tags, "tag", "tag to push (repeatable)")
	fs.Var(&labels, "label", "key=value label to add to the image config (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *tarPath == "" || *registry == "" || *repo == "" || len(tags) == 0 {
		return fmt.Errorf("-tar, -registry, -repo and at least one -tag are required")
	}
	files, err := readTar(*tarPath)
	if err != nil {
		return err
	}
	manifest, desc, err := imageManifest(files)
	if err != nil {
		return err
	}
	if len(labels) > 0 {
		if manifest, desc, err = relabel(files, manifest, desc, labels); err != nil {
			return err
		}
	}
	c, err := newClient(*registry, *repo, *user, *cacert)
	if err != nil {
		return err
	}
	blobs := append([]descriptor{manifest.Config}, manifest.Layers...)
	for _, b := range blobs {
		data, ok := files[blobPath(b.Digest)]
		if !ok {
			return fmt.Errorf("%s: blob %s missing", *tarPath, b.Digest)
		}
		if err := c.pushBlob(b.Digest, data); err != nil {
			return err
		}
	}
	raw := files[blobPath(desc.Digest)]
	for _, tag := range tags {
		if err := c.pushManifest(tag, desc.MediaType, raw); err != nil {
			return err
		}
	}
	fmt.Println(desc.Digest)
	return nil
}

type descriptor struct {
	MediaType string `json:"mediaType"`
	Digest    string `json:"digest"`
	Size      int64  `json:"size"`
}

type manifest struct {
	Config descriptor   `json:"config"`
	Layers []descriptor `json:"layers"`
}

func readTar(path string) (map[string][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("read %s: %s: %w", path, h.Name, err)
		}
		files[strings.TrimPrefix(h.Name, "./")] = data
	}
}

// imageManifest returns the layout's manifest; every index entry of
// ociimage's layouts names the same one.
func imageManifest(files map[string][]byte) (manifest, descriptor, error) {
	var index struct {
		Manifests []descriptor `json:"manifests"`
	}
	if err := json.Unmarshal(files["index.json"], &index); err != nil || len(index.Manifests) == 0 {
		return manifest{}, descriptor{}, fmt.Errorf("index.json: no manifest (%v)", err)
	}
	desc := index.Manifests[0]
	var m manifest
	raw := files[blobPath(desc.Digest)]
	if err := json.Unmarshal(raw, &m); err != nil {
		return manifest{}, descriptor{}, fmt.Errorf("manifest %s: %w", desc.Digest, err)
	}
	return m, desc, nil
}

type client struct {
	http       *http.Client
	base       *url.URL // https://registry/v2/repo/
	user, pass string
}

func newClient(registry, repo, userPass, cacert string) (*client, error) {
	cfg := &tls.Config{}
	if cacert != "" {
		pem, err := os.ReadFile(cacert)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate", cacert)
		}
		cfg.RootCAs = pool
	}
	base, err := url.Parse("https://" + registry + "/v2/" + repo + "/")
	if err != nil {
		return nil, err
	}
	c := &client{http: &http.Client{Timeout: time.Minute, Transport: &http.Transport{TLSClientConfig: cfg}}, base: base}
	c.user, c.pass, _ = strings.Cut(userPass, ":")
	return c, nil
}

func (c *client) do(method string, u *url.URL, contentType string, body []byte, want ...int) (*http.Response, error) {
	req, err := http.NewRequest(method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if c.user != "" {
		req.SetBasicAuth(c.user, c.pass)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	for _, code := range want {
		if resp.StatusCode == code {
			return resp, nil
		}
	}
	return resp, fmt.Errorf("%s %s: %s: %s", method, u.Path, resp.Status, strings.TrimSpace(string(msg)))
}

func (c *client) ref(path string) *url.URL { return c.base.ResolveReference(&url.URL{Path: path}) }

// pushBlob uploads one blob in a single request unless the registry has it.
func (c *client) pushBlob(digest string, data []byte) error {
	if resp, err := c.do(http.MethodHead, c.ref("blobs/"+digest), "", nil, http.StatusOK, http.StatusNotFound); err != nil {
		return err
	} else if resp.StatusCode == http.StatusOK {
		return nil
	}
	resp, err := c.do(http.MethodPost, c.ref("blobs/uploads/"), "", nil, http.StatusAccepted)
	if err != nil {
		return err
	}
	loc, err := c.base.Parse(resp.Header.Get("Location"))
	if err != nil {
		return fmt.Errorf("upload location: %w", err)
	}
	q := loc.Query()
	q.Set("digest", digest)
	loc.RawQuery = q.Encode()
	_, err = c.do(http.MethodPut, loc, "application/octet-stream", data, http.StatusCreated)
	return err
}

func (c *client) pushManifest(tag, mediaType string, raw []byte) error {
	_, err := c.do(http.MethodPut, c.ref("manifests/"+tag), mediaType, raw, http.StatusCreated)
	return err
}

// relabel adds labels to the image config and stores the new config and
// manifest among files, returning them.
func relabel(files map[string][]byte, m manifest, desc descriptor, labels []string) (manifest, descriptor, error) {
	var cfg map[string]any
	if err := json.Unmarshal(files[blobPath(m.Config.Digest)], &cfg); err != nil {
		return m, desc, fmt.Errorf("config %s: %w", m.Config.Digest, err)
	}
	exec, _ := cfg["config"].(map[string]any)
	if exec == nil {
		exec = map[string]any{}
		cfg["config"] = exec
	}
	l, _ := exec["Labels"].(map[string]any)
	if l == nil {
		l = map[string]any{}
		exec["Labels"] = l
	}
	for _, kv := range labels {
		k, v, _ := strings.Cut(kv, "=")
		l[k] = v
	}
	rawCfg, err := json.Marshal(cfg)
	if err != nil {
		return m, desc, err
	}
	m.Config.Digest, m.Config.Size = store(files, rawCfg)
	var raw map[string]any
	if err := json.Unmarshal(files[blobPath(desc.Digest)], &raw); err != nil {
		return m, desc, err
	}
	raw["config"] = m.Config
	rawManifest, err := json.Marshal(raw)
	if err != nil {
		return m, desc, err
	}
	desc.Digest, desc.Size = store(files, rawManifest)
	return m, desc, nil
}

func store(files map[string][]byte, data []byte) (string, int64) {
	sum := sha256.Sum256(data)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	files[blobPath(digest)] = data
	return digest, int64(len(data))
}

func blobPath(digest string) string { return "blobs/" + strings.Replace(digest, ":", "/", 1) }
