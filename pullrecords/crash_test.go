package pullrecords

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/credentials"
)

// crashChildEnv names the directory a child process writes records to
// until it is killed.
const crashChildEnv = "PULLRECORDS_CRASH_CHILD_DIR"

// A podline killed while it writes records leaves files that all read
// whole: each is the old version or the new one. Here a child process
// writes intents and records (every pull adds a secret, so each record
// is rewritten, growing) as fast as it can and is SIGKILLed at random
// moments; after each kill the directory must open with every record
// readable, no temporary file left, and the records written so far
// answering.
func TestCrashMidWriteLeavesWholeFiles(t *testing.T) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		writeUntilKilled(dir)
		return
	}
	dir := t.TempDir()
	for round := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashMidWriteLeavesWholeFiles$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The first rounds let the child get past its start, the later
		// ones cut it at any point.
		time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		s := openStore(t, dir, "")
		if len(s.unreadable) > 0 {
			t.Fatalf("round %d: %d record files torn by the kill: %v", round, len(s.unreadable), s.unreadable)
		}
		for _, sub := range []string{pullingDir, pulledDir} {
			entries, _ := os.ReadDir(filepath.Join(dir, sub))
			for _, e := range entries {
				if !isRecordFile(e.Name()) {
					t.Errorf("round %d: %s/%s left after Open", round, sub, e.Name())
				}
				if sub == pullingDir {
					if _, err := decodeIntent(mustRead(t, filepath.Join(dir, sub, e.Name()))); err != nil {
						t.Errorf("round %d: intent %s: %v", round, e.Name(), err)
					}
				}
			}
		}
		// The child's first pull of each image was with secret 0, which
		// every later version of the record keeps.
		for i, rec := range s.records {
			r, err := credentials.ParseReference(crashImage(rec.ImageRef))
			if err != nil {
				t.Fatalf("record %s: %v", i, err)
			}
			if got := verdict(s, r, rec.ImageRef, v1.PullIfNotPresent, crashCred(0)); got != Use {
				t.Errorf("round %d: image %s with the first secret it was pulled with: %s, want use", round, rec.ImageRef, got)
			}
		}
	}
}

func crashCred(i int) credentials.Credential {
	return cred("ns", fmt.Sprintf("s%d", i), fmt.Sprintf("uid-%d", i), fmt.Sprintf("pw-%d", i))
}

// crashImage is the image the child pulls as imageRef.
func crashImage(imageRef string) string { return "r.io/app-" + imageRef[len(imageRef)-1:] + ":1" }

func writeUntilKilled(dir string) {
	p, _ := NewPolicy("", nil)
	s, err := Open(dir, p, quiet)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		imageRef := fmt.Sprintf("sha256:%063d%d", 0, i%4)
		r, _ := credentials.ParseReference(crashImage(imageRef))
		if err := s.PullStarted(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		c := crashCred(i / 4)
		s.PullSucceeded(r, imageRef, &c)
	}
}
