package stages

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

// TestSubPathPrepareRefusesEscape plants what a container can plant in an
// emptyDir and prepares the mounts as the container stage does.
func TestSubPathPrepareRefusesEscape(t *testing.T) {
	root := t.TempDir()
	node := &Node{Name: "n", RootDir: root}
	t.Cleanup(func() { unmountUnder(root) })
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "secret"), []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "scratch", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}
	})
	vol, _ := podspec.VolumeHostPath(node, pod, &pod.Spec.Volumes[0])
	if err := setupEmptyDir(vol, filepath.Join(root, "ready"), &v1.EmptyDirVolumeSource{}, nil); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/", filepath.Join(vol, "root"))
	os.Symlink(host, filepath.Join(vol, "hostdir"))
	os.Symlink("../../../../../../../../..", filepath.Join(vol, "climb"))
	os.Mkdir(filepath.Join(vol, "ok"), 0o777)
	os.WriteFile(filepath.Join(vol, "ok", "f"), []byte("mine"), 0o644)
	os.Symlink("ok", filepath.Join(vol, "alias"))

	prepare := func(sub string) (string, error) {
		pod.Spec.Containers[0].VolumeMounts = []v1.VolumeMount{{Name: "scratch", MountPath: "/m", SubPath: sub}}
		binds, err := podspec.SubPathBinds(pod, &pod.Spec.Containers[0], node, nil)
		if err != nil {
			return "", err
		}
		return binds[0].Target, prepareSubPath(binds[0])
	}
	for _, sub := range []string{"root", "root/etc", "hostdir", "hostdir/secret", "hostdir/made", "climb"} {
		_, err := prepare(sub)
		if !errors.Is(err, podspec.ErrConfig) || !strings.Contains(err.Error(), "resolves outside the volume") {
			t.Errorf("subPath %q: %v, want a refusal", sub, err)
		}
	}
	if entries, _ := os.ReadDir(host); len(entries) != 1 {
		t.Errorf("a directory was made through a planted link: %v", entries)
	}

	target, err := prepare("alias")
	if err != nil {
		t.Fatalf("a link that stays inside the volume: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(target, "f")); err != nil || string(b) != "mine" {
		t.Errorf("bind target shows %q, %v", b, err)
	}
	if _, err := prepare("new/dir"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(vol, "new", "dir"))
	if err != nil || fi.Mode().Perm() != 0o777 {
		t.Errorf("made subPath %v, %v; want mode 0777 like its emptyDir", fi, err)
	}
	if err := unmountUnder(root); err != nil {
		t.Fatal(err)
	}
	if mounts, _ := mountsUnder(root); len(mounts) != 0 {
		t.Errorf("teardown left %v mounted", mounts)
	}
}
