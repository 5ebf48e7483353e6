package fake

import (
	"os"
	"path/filepath"
	"testing"
)

// Listen starts a Server with opts on a unix socket in a temporary
// directory and stops it when the test ends. It returns the socket path.
func Listen(t testing.TB, opts Options) (socketPath string, srv *Server) {
	t.Helper()
	dir := t.TempDir()
	// A unix socket path must fit in 108 bytes; long test names and
	// TMPDIRs can exceed that.
	if len(dir) > 90 {
		var err error
		if dir, err = os.MkdirTemp("/tmp", "fakecri"); err != nil {
			t.Fatalf("fake runtime dir: %v", err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
	}
	socketPath = filepath.Join(dir, "cri.sock")
	srv = New(opts)
	stop, err := srv.Start(socketPath)
	if err != nil {
		t.Fatalf("start fake runtime: %v", err)
	}
	t.Cleanup(stop)
	return socketPath, srv
}
