//go:build e2e

package e2e

// The image pull tests pull from the registry scripts/with-registry.sh
// starts on loopback (registry.sh): TLS from its own CA, which containerd
// trusts through the hosts dir its config names, and htpasswd auth on
// every repository. Without PODLINE_REGISTRY they skip; `make test-e2e`
// always sets it.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

// testRegistry is what with-registry.sh exported.
type testRegistry struct {
	addr     string // host:port
	user     string
	password string
	busybox  string // the private busybox repository, without tag
	digest   string // its manifest digest
}

func needRegistry(t *testing.T) *testRegistry {
	t.Helper()
	r := &testRegistry{
		addr:     os.Getenv("PODLINE_REGISTRY"),
		user:     os.Getenv("PODLINE_REGISTRY_USER"),
		password: os.Getenv("PODLINE_REGISTRY_PASSWORD"),
		busybox:  os.Getenv("PODLINE_REGISTRY_BUSYBOX"),
		digest:   os.Getenv("PODLINE_REGISTRY_BUSYBOX_DIGEST"),
	}
	if r.addr == "" {
		t.Skip("no registry: run under scripts/with-registry.sh (make test-e2e does)")
	}
	if r.password == "" || r.busybox == "" || r.digest == "" {
		t.Fatalf("with-registry.sh exported an incomplete registry: %+v", r)
	}
	return r
}

// dockerConfigJSON is a .dockerconfigjson holding user:password for the
// registry.
func (r *testRegistry) dockerConfigJSON(user, password string) []byte {
	b, _ := json.Marshal(map[string]any{"auths": map[string]any{
		r.addr: map[string]string{"auth": base64.StdEncoding.EncodeToString([]byte(user + ":" + password))},
	}})
	return b
}

// pullWaitIs: the pod's only container waits with reason.
func pullWaitIs(reason string) func(*v1.Pod) bool {
	return func(p *v1.Pod) bool {
		if len(p.Status.ContainerStatuses) != 1 {
			return false
		}
		w := p.Status.ContainerStatuses[0].State.Waiting
		return w != nil && w.Reason == reason
	}
}

func pullWaitMessage(p *v1.Pod) string { return p.Status.ContainerStatuses[0].State.Waiting.Message }

// imagePod renders a one-container static pod of image with a pull policy.
func imagePod(name, image, policy string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %s
spec:
  terminationGracePeriodSeconds: 5
  containers:
  - name: app
    image: %s
    imagePullPolicy: %s
    command: ["sh", "-c", "trap 'exit 0' TERM; while true; do sleep 1; done"]
`, name, image, policy)
}

// A static pod cannot name pull secrets (no API server), so a private
// image is refused: ErrImagePull with the registry's answer as containerd
// words it, then ImagePullBackOff repeating it. A name that is no
// reference never reaches the runtime.
func TestRegistryPullWithoutCredentials(t *testing.T) {
	r := needRegistry(t)
	a := startAgent(t)
	image := r.busybox + ":1.36"
	a.writeManifest("private.yaml", imagePod("private", image, "Always"))
	p := a.waitPod("private", "ErrImagePull", 60*time.Second, pullWaitIs("ErrImagePull"))
	msg := pullWaitMessage(p)
	if !strings.HasPrefix(msg, "rpc error: code = ") || !strings.Contains(msg, image) || !strings.Contains(msg, "authorization") {
		t.Errorf("ErrImagePull message %q: want the runtime's error naming %s and the authorization the registry wants", msg, image)
	}
	p = a.waitPod("private", "ImagePullBackOff", 30*time.Second, pullWaitIs("ImagePullBackOff"))
	if want := fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, msg); pullWaitMessage(p) != want {
		t.Errorf("ImagePullBackOff message %q, want %q", pullWaitMessage(p), want)
	}

	a.writeManifest("badname.yaml", imagePod("badname", "Bad/Name:1", "IfNotPresent"))
	p = a.waitPod("badname", "InvalidImageName", 30*time.Second, pullWaitIs("InvalidImageName"))
	if msg := pullWaitMessage(p); !strings.Contains(msg, `couldn't parse image name "Bad/Name:1"`) {
		t.Errorf("InvalidImageName message %q", msg)
	}
}
