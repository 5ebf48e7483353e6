//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// watchOpens reports every open of the given files (O_PATH lookups open
// nothing and are not reported).
func watchOpens(t *testing.T, paths ...string) func() bool {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	for _, p := range paths {
		if _, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN|unix.IN_DONT_FOLLOW); err != nil {
			t.Fatal(err)
		}
	}
	return func() bool {
		buf := make([]byte, 4096)
		n, err := unix.Read(fd, buf)
		if errors.Is(err, unix.EAGAIN) {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
}

// A pod with hostPath volumes on the pod log directory and on a directory
// under /var/log plants what a root reader must not open: a link from
// its own log to a file of the host, a FIFO and a device node. Its
// `kubectl logs` serves nothing of the host file, and /logs/ refuses the
// FIFO and the device with a 403 without opening them.
func TestPlantedLogFilesAreNotOpened(t *testing.T) {
	varlog := filepath.Join("/var/log", fmt.Sprintf("podline-e2e-planted-%d", os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(varlog) }) // after the agent's cleanup
	secret := filepath.Join(t.TempDir(), "secret.log")
	if err := os.WriteFile(secret, []byte("2026-11-28T10:00:00.000000000Z stdout F secret of the host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, get := startServingAgent(t)
	volumes := fmt.Sprintf("  volumes:\n  - name: podlogs\n    hostPath: {path: %s}\n  - name: varlog\n    hostPath: {path: %s, type: DirectoryOrCreate}\n", a.logs, varlog)
	script := fmt.Sprintf("until ls /podlogs/default_planter-%[1]s_*/app/0.log; do sleep 0.1; done; "+
		"ln -sf %[2]s /podlogs/default_planter-%[1]s_*/app/0.log; mkfifo /varlog/fifo; mknod /varlog/dev c 1 3", nodeName, secret)
	a.writeManifest("planter.yaml", securityPod("planter", "", volumes,
		secContainer{name: "app", script: script, mounts: "[{name: podlogs, mountPath: /podlogs}, {name: varlog, mountPath: /varlog}]"}))
	p := a.waitRunning("planter", 30*time.Second)
	logFile := filepath.Join(a.logs, fmt.Sprintf("default_%s_%s", p.Name, p.UID), "app", "0.log")
	eventually(t, 20*time.Second, "the link, the FIFO and the device planted", func() (bool, string) {
		st, err := os.Lstat(logFile)
		_, errFIFO := os.Lstat(filepath.Join(varlog, "fifo"))
		_, errDev := os.Lstat(filepath.Join(varlog, "dev"))
		return err == nil && st.Mode()&os.ModeSymlink != 0 && errFIFO == nil && errDev == nil, fmt.Sprintf("%v %v %v", err, errFIFO, errDev)
	})
	opened := watchOpens(t, secret, filepath.Join(varlog, "fifo"), filepath.Join(varlog, "dev"))

	for _, q := range []string{"", "?follow=true", "?tailLines=1", "?timestamps=true"} {
		code, body := get("/containerLogs/default/" + p.Name + "/app" + q)
		if code != http.StatusInternalServerError || strings.Contains(body, "secret") {
			t.Errorf("GET /containerLogs/default/%s/app%s = %d %q, want 500 and nothing of the host file", p.Name, q, code, body)
		}
	}
	if !contains(a.out.String(), "goes through a symbolic link") {
		t.Errorf("podline's log does not say why the log was refused:\n%s", a.out)
	}
	base := "/logs/" + filepath.Base(varlog)
	for file, what := range map[string]string{"fifo": "not a regular file: a named pipe", "dev": "not a regular file: a character device"} {
		code, body := get(base + "/" + file)
		if code != http.StatusForbidden || !strings.Contains(body, what) {
			t.Errorf("GET %s/%s = %d %q, want 403 with %q", base, file, code, body, what)
		}
	}
	if code, body := get(base + "/"); code != http.StatusOK || !strings.Contains(body, `<a href="fifo">fifo</a>`) {
		t.Errorf("GET %s/ = %d %q, want the directory listed", base, code, body)
	}
	if opened() {
		t.Error("podline opened the host file, the FIFO or the device")
	}
}
