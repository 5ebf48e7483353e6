//go:build e2e

package e2e

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods that all need one absent image share one pull: the registry is
// asked for the image by its tag once, however many pods wait for it. The
// tag is new to this run, so no earlier test left the image behind.
func TestClusterOnePullPerImage(t *testing.T) {
	r := needRegistry(t)
	logPath := os.Getenv("PODLINE_REGISTRY_LOG")
	if logPath == "" {
		t.Fatal("with-registry.sh exported no PODLINE_REGISTRY_LOG")
	}
	n := startNode(t)
	n.waitReady(60 * time.Second)
	tag := fmt.Sprintf("pull-once-%d", time.Now().UnixNano())
	r.retag(t, "1.36", tag)
	image := r.busybox + ":" + tag

	secret := &v1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "pull", Namespace: n.name},
		Type:       v1.SecretTypeDockerConfigJson,
		Data:       map[string][]byte{v1.DockerConfigJsonKey: r.dockerConfigJSON(r.user, r.password)},
	}
	if _, err := n.cp.admin.CoreV1().Secrets(n.name).Create(apiCtx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const pods = 20
	for i := range pods {
		p := n.apiPod(fmt.Sprintf("once-%02d", i), "while true; do sleep 1; done")
		p.Spec.Containers[0].Image = image
		p.Spec.Containers[0].ImagePullPolicy = v1.PullIfNotPresent
		p.Spec.ImagePullSecrets = []v1.LocalObjectReference{{Name: "pull"}}
		n.createPod(p)
	}
	for i := range pods {
		n.waitAPIPod(n.name, fmt.Sprintf("once-%02d", i), "Running", 120*time.Second, podRunning)
	}
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	// One access-log line per request: `... "HEAD /v2/<repo>/manifests/<tag>
	// HTTP/1.1" 200 ...`. The 401s that ask for the credentials first are
	// not pulls.
	repo := strings.TrimPrefix(r.busybox, r.addr)
	var answered []string
	for line := range strings.Lines(string(log)) {
		if strings.Contains(line, repo+"/manifests/"+tag+" HTTP/") && strings.Contains(line, `" 200 `) {
			answered = append(answered, strings.TrimSpace(line))
		}
	}
	t.Logf("requests for the tag the registry answered:\n%s", strings.Join(answered, "\n"))
	if len(answered) != 1 {
		t.Errorf("%d pods of one absent image: the registry answered %d requests for %s, want 1:\n%s",
			pods, len(answered), image, strings.Join(answered, "\n"))
	}
}

// retag gives the manifest of from a second tag, to, in the busybox
// repository, as a push of the same image under a new name would.
func (r *testRegistry) retag(t *testing.T, from, to string) {
	t.Helper()
	ca, err := os.ReadFile(os.Getenv("PODLINE_REGISTRY_CA"))
	if err != nil {
		t.Fatalf("registry CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		t.Fatal("registry CA: no certificate")
	}
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	base := "https://" + r.addr + "/v2" + strings.TrimPrefix(r.busybox, r.addr) + "/manifests/"
	do := func(method, url string, body []byte, header http.Header) (*http.Response, []byte) {
		req, err := http.NewRequest(method, url, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = header
		req.SetBasicAuth(r.user, r.password)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode/100 != 2 {
			t.Fatalf("%s %s: %s: %s", method, url, resp.Status, b)
		}
		return resp, b
	}
	resp, manifest := do(http.MethodGet, base+from, nil, http.Header{"Accept": {
		"application/vnd.oci.image.index.v1+json",
		"application/vnd.oci.image.manifest.v1+json",
		"application/vnd.docker.distribution.manifest.list.v2+json",
		"application/vnd.docker.distribution.manifest.v2+json",
	}})
	do(http.MethodPut, base+to, manifest, http.Header{"Content-Type": {resp.Header.Get("Content-Type")}})
}
