package machine

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMemTotal(t *testing.T) {
	got, err := memTotal("testdata/meminfo")
	if err != nil || got != 24684096*1024 {
		t.Fatalf("memTotal = %d, %v", got, err)
	}
	bad := filepath.Join(t.TempDir(), "meminfo")
	os.WriteFile(bad, []byte("MemFree: 1 kB\n"), 0o644)
	if _, err := memTotal(bad); err == nil {
		t.Fatal("a meminfo without MemTotal must be an error")
	}
}

func TestReadThisMachine(t *testing.T) {
	info, err := Read()
	if err != nil {
		t.Fatal(err)
	}
	if info.NumCores < 1 || info.MemoryCapacity < 1<<20 || info.KernelVersion == "" {
		t.Fatalf("implausible machine: %+v", info)
	}
	if ips := NodeIPs(); len(ips) == 0 || ips[0] == "" {
		t.Fatalf("NodeIPs = %v", ips)
	}
}
