package procstat

import "testing"

func TestBusySeconds(t *testing.T) {
	// user 100, nice 1, system 50, idle 9000, iowait 7, irq 2, softirq 3,
	// steal 400, guest 20 (inside user).
	got, err := busySeconds("cpu  100 1 50 9000 7 2 3 400 20 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := 1.56; got != want {
		t.Fatalf("busy = %v s, want %v", got, want)
	}
	if _, err := busySeconds("intr 1 2 3\n"); err == nil {
		t.Fatal("a /proc/stat without a cpu line was read")
	}
	if _, err := busySeconds("cpu 1 2 x 4 5 6 7\n"); err == nil {
		t.Fatal("a cpu line with a non-number was read")
	}
}
