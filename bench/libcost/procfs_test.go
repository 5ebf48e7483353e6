package libcost

import (
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"testing"

	"github.com/prometheus/procfs"

	"github.com/podline/podline/machine"
)

// procCopy copies the node's /proc/meminfo, /proc/stat and this process's
// net/dev into a directory laid out as /proc, so both readers see the same
// bytes.
func procCopy(tb testing.TB) (root string, pid int) {
	tb.Helper()
	root, pid = tb.TempDir(), os.Getpid()
	for src, dst := range map[string]string{
		"/proc/meminfo":      "meminfo",
		"/proc/stat":         "stat",
		"/proc/self/net/dev": filepath.Join(strconv.Itoa(pid), "net", "dev"),
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			tb.Fatal(err)
		}
		dst = filepath.Join(root, dst)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return root, pid
}

// procfsMemory is machine.ReadMemory on procfs.
func procfsMemory(fs procfs.FS) (machine.Memory, error) {
	mi, err := fs.Meminfo()
	if err != nil {
		return machine.Memory{}, err
	}
	m := machine.Memory{
		Total: *mi.MemTotalBytes, Free: *mi.MemFreeBytes, Available: *mi.MemAvailableBytes,
		InactiveFile: *mi.InactiveFileBytes, RSS: *mi.AnonPagesBytes,
	}
	m.Usage = m.Total - m.Free
	if m.Usage > m.InactiveFile {
		m.WorkingSet = m.Usage - m.InactiveFile
	}
	return m, nil
}

// procfsCPU is machine.ReadCPUUsage on procfs, whose seconds are ticks
// divided by USER_HZ: rounding back to ticks gives the exact count.
func procfsCPU(fs procfs.FS) (uint64, error) {
	st, err := fs.Stat()
	if err != nil {
		return 0, err
	}
	c := st.CPUTotal
	var ticks uint64
	for _, s := range []float64{c.User, c.Nice, c.System, c.IRQ, c.SoftIRQ, c.Steal} {
		ticks += uint64(math.Round(s * 100))
	}
	return ticks * 1e7, nil
}

// procfsNetDev is machine.NetDev on procfs.
func procfsNetDev(fs procfs.FS, pid int) ([]machine.Interface, error) {
	p, err := fs.Proc(pid)
	if err != nil {
		return nil, err
	}
	nd, err := p.NetDev()
	if err != nil {
		return nil, err
	}
	var out []machine.Interface
	for name, l := range nd {
		if name == "lo" {
			continue
		}
		out = append(out, machine.Interface{Name: name, RxBytes: l.RxBytes, RxErrors: l.RxErrors, TxBytes: l.TxBytes, TxErrors: l.TxErrors})
	}
	return out, nil
}

func TestProcfsSameValues(t *testing.T) {
	root, pid := procCopy(t)
	fs, err := procfs.NewFS(root)
	if err != nil {
		t.Fatal(err)
	}
	ownMem, err := machine.ReadMemory(filepath.Join(root, "meminfo"))
	if err != nil {
		t.Fatal(err)
	}
	libMem, err := procfsMemory(fs)
	if err != nil {
		t.Fatal(err)
	}
	if ownMem != libMem {
		t.Errorf("memory: own %+v, procfs %+v", ownMem, libMem)
	}
	ownCPU, err := machine.ReadCPUUsage(filepath.Join(root, "stat"))
	if err != nil {
		t.Fatal(err)
	}
	if libCPU, err := procfsCPU(fs); err != nil || libCPU != ownCPU {
		t.Errorf("cpu: own %d, procfs %d (%v)", ownCPU, libCPU, err)
	}
	ownNet, err := machine.ReadNetDev(filepath.Join(root, strconv.Itoa(pid), "net", "dev"))
	if err != nil {
		t.Fatal(err)
	}
	libNet, err := procfsNetDev(fs, pid)
	if err != nil {
		t.Fatal(err)
	}
	byName := func(ifs []machine.Interface) map[string]machine.Interface {
		m := map[string]machine.Interface{}
		for _, i := range ifs {
			m[i.Name] = i
		}
		return m
	}
	if !reflect.DeepEqual(byName(ownNet), byName(libNet)) {
		t.Errorf("net/dev: own %+v, procfs %+v", ownNet, libNet)
	}
}

// BenchmarkProc reads each file once per op, as a stats collection does:
// meminfo and stat once per scrape, net/dev once per pod.
func BenchmarkProc(b *testing.B) {
	root, pid := procCopy(b)
	fs, err := procfs.NewFS(root)
	if err != nil {
		b.Fatal(err)
	}
	meminfo, stat := filepath.Join(root, "meminfo"), filepath.Join(root, "stat")
	netdev := filepath.Join(root, strconv.Itoa(pid), "net", "dev")
	f := func(name string, fn func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := fn(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	f("file=meminfo/impl=own", func() error { _, err := machine.ReadMemory(meminfo); return err })
	f("file=meminfo/impl=procfs", func() error { _, err := procfsMemory(fs); return err })
	f("file=stat/impl=own", func() error { _, err := machine.ReadCPUUsage(stat); return err })
	f("file=stat/impl=procfs", func() error { _, err := procfsCPU(fs); return err })
	f("file=netdev/impl=own", func() error { _, err := machine.ReadNetDev(netdev); return err })
	f("file=netdev/impl=procfs", func() error { _, err := procfsNetDev(fs, pid); return err })
}
