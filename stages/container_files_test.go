package stages

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/podspec"
)

func TestCreateTerminationLog(t *testing.T) {
	node := &Node{RootDir: t.TempDir()}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	path := func(attempt uint32) string { return podspec.TerminationLogPath(node, "uid-web", "app", attempt) }
	for attempt := range uint32(4) {
		if err := createTerminationLog(node, "uid-web", "app", attempt); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(path(attempt))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o666 || fi.Size() != 0 {
			t.Errorf("attempt %d: %s, %d bytes; want an empty file any user may write", attempt, fi.Mode(), fi.Size())
		}
		if err := os.WriteFile(path(attempt), []byte("written"), 0); err != nil {
			t.Fatal(err)
		}
	}
	// The two newest instances' files stay for the status; older go.
	for attempt, want := range []bool{false, false, true, true} {
		if _, err := os.Stat(path(uint32(attempt))); (err == nil) != want {
			t.Errorf("attempt %d: file kept %v, want %v", attempt, err == nil, want)
		}
	}
	// A retried creation of the same instance starts empty again.
	if err := createTerminationLog(node, "uid-web", "app", 3); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path(3)); fi.Size() != 0 {
		t.Errorf("retried instance's file kept %d bytes", fi.Size())
	}
}

func TestWriteHostsFile(t *testing.T) {
	node := &Node{RootDir: t.TempDir(), DNS: podspec.DNS{ClusterDomain: "cluster.local"}}
	pod := unitPod(func(p *v1.Pod) { p.Spec.Hostname, p.Spec.Subdomain = "db-0", "db" })
	path := podspec.HostsFilePath(node, pod.UID)
	read := func() (string, uint64) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(path)
		if fi.Mode() != 0o644 {
			t.Errorf("mode %s", fi.Mode())
		}
		return string(b), fi.Sys().(*syscall.Stat_t).Ino
	}
	if err := writeHostsFile(node, pod, []string{"10.88.0.5"}); err != nil {
		t.Fatal(err)
	}
	content, ino := read()
	want, _ := podspec.HostsFile(pod, []string{"10.88.0.5"}, node, nil)
	if content != string(want) {
		t.Errorf("content %q", content)
	}
	// The next container of the pod: the file the first one mounted stays.
	if err := writeHostsFile(node, pod, []string{"10.88.0.5"}); err != nil {
		t.Fatal(err)
	}
	if _, again := read(); again != ino {
		t.Error("an unchanged hosts file was written again")
	}
	// A new sandbox, a new address.
	if err := writeHostsFile(node, pod, []string{"10.88.0.9"}); err != nil {
		t.Fatal(err)
	}
	content, _ = read()
	if want, _ := podspec.HostsFile(pod, []string{"10.88.0.9"}, node, nil); content != string(want) {
		t.Errorf("after the address changed: %q", content)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestWriteHostsFileHostNetwork(t *testing.T) {
	nodeHosts := filepath.Join(t.TempDir(), "hosts")
	writeFile(t, nodeHosts, "127.0.0.1 localhost\n192.0.2.10 node-a\n")
	defer func(old string) { nodeHostsFile = old }(nodeHostsFile)
	nodeHostsFile = nodeHosts

	node := &Node{RootDir: t.TempDir()}
	pod := unitPod(func(p *v1.Pod) {
		p.Spec.HostNetwork = true
		p.Spec.HostAliases = []v1.HostAlias{{IP: "192.0.2.1", Hostnames: []string{"foo.local"}}}
	})
	if err := writeHostsFile(node, pod, []string{"192.0.2.10"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(podspec.HostsFilePath(node, pod.UID))
	if err != nil {
		t.Fatal(err)
	}
	want := "# Kubernetes-managed hosts file (host network).\n127.0.0.1 localhost\n192.0.2.10 node-a\n" +
		"\n# Entries added by HostAliases.\n192.0.2.1\tfoo.local\n"
	if string(got) != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
