package machine

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func TestParseNetDev(t *testing.T) {
	got, err := ReadNetDev("testdata/net-dev")
	if err != nil {
		t.Fatal(err)
	}
	want := []Interface{
		{Name: "eth0", RxBytes: 526501860, RxErrors: 3, TxBytes: 3007112, TxErrors: 1},
		{Name: "vethd2c1f0a8", RxBytes: 1<<64 - 1, TxBytes: 936},
		{Name: "ifb0"},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("ReadNetDev:\n got %+v\nwant %+v", got, want)
	}
	f := func(content string, wantErr string) {
		t.Helper()
		got, err := ParseNetDev([]byte(content))
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%q: %+v, %v; want an error with %q", content, got, err, wantErr)
		}
	}
	const header = "Inter-|   Receive  |  Transmit\n face |bytes    packets|bytes    packets\n"
	f(header+"  eth0: 1 2 3\n", "16 counters")
	f(header+"  eth0: 1 2 x 4 5 6 7 8 9 10 11 12 13 14 15 16\n", "interface eth0")
	f(header+"    : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n", "want an interface")
	// The loopback is skipped whatever it holds; no interfaces is no error.
	if got, err := ParseNetDev([]byte(header + "    lo: garbage\n")); err != nil || len(got) != 0 {
		t.Errorf("loopback only: %+v, %v", got, err)
	}
}

// This process sees the host's interfaces; counters agree with sysfs read
// around them. Other tests on the machine may add and remove interfaces
// (CNI veths) meanwhile: only those present throughout must match.
func TestNetDevHost(t *testing.T) {
	rxBytes := func(name string) (uint64, bool) {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", name, "statistics", "rx_bytes"))
		if err != nil {
			return 0, false // gone meanwhile
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return v, true
	}
	list := func() map[string]uint64 {
		ents, err := os.ReadDir("/sys/class/net")
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]uint64{}
		for _, e := range ents {
			if v, ok := rxBytes(e.Name()); ok && e.Name() != "lo" {
				out[e.Name()] = v
			}
		}
		return out
	}
	before := list()
	got, err := NetDev(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	after := list()
	seen := map[string]bool{}
	for _, i := range got {
		seen[i.Name] = true
		lo, inBefore := before[i.Name]
		hi, inAfter := after[i.Name]
		if !inBefore && !inAfter {
			t.Errorf("NetDev lists %s, which /sys/class/net never had", i.Name)
		}
		if inBefore && inAfter && (i.RxBytes < lo || i.RxBytes > hi) {
			t.Errorf("%s: rx_bytes %d, sysfs says %d..%d", i.Name, i.RxBytes, lo, hi)
		}
	}
	for name := range before {
		if _, still := after[name]; still && !seen[name] {
			t.Errorf("NetDev misses %s", name)
		}
	}
	if len(seen) == 0 {
		t.Error("no interface besides lo")
	}
}

// NetDev of a process in a network namespace of its own sees that
// namespace's interfaces only.
func TestNetDevOtherNamespace(t *testing.T) {
	cmd := exec.Command("sh", "-c", "ip link add pltest0 type veth peer name pltest1 && echo ready && exec cat")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Wait()
	})
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "ready\n" {
		t.Fatalf("namespace helper: %q, %v", line, err)
	}
	got, err := NetDev(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, i := range got {
		names = append(names, i.Name)
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"pltest0", "pltest1"}) {
		t.Fatalf("interfaces in the new namespace: %+v", got)
	}
}
