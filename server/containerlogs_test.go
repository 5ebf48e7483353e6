package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pod with a hostPath volume on the pod log directory can swap another
// pod's log for a link to a file of the host: /containerLogs (kubectl
// logs, -f, --previous all read through it) serves nothing through it.
func TestContainerLogsThroughALink(t *testing.T) {
	s, loc, _ := newSecure(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("2026-11-25T10:00:00Z stdout F secret of the host\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, loc.log); err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	for _, path := range []string{"/containerLogs/default/web/app", "/containerLogs/default/web/app?follow=true", "/containerLogs/default/web/app?tailLines=1"} {
		loc.running = false
		code, body := get(t, h, path)
		if code != 500 || strings.Contains(body, "secret") || !strings.Contains(body, "log unreadable") {
			t.Errorf("GET %s = %d %q, want 500 log unreadable", path, code, body)
		}
	}
}
