// Package machine reads facts about the node podline runs on: cores,
// memory, identity and addresses. It reads /proc, /sys and /etc and writes
// nothing.
//
// The /proc readers (meminfo, stat, net/dev, vmstat) are its own rather
// than prometheus/procfs: they read the same values (bench/libcost
// TestProcfsSameValues) at a quarter to two thirds of the cost, 22–29 µs
// against 41–98 µs a read and 6–14 allocations against 34–173, median of 5
// (bench/results/2026-11-27-vm/libcost-9349551.txt), and procfs has no
// /proc/vmstat reader. They are read on each /stats/summary request and
// node status update, so the saving is small in absolute terms; it keeps
// procfs and its dependencies out of the agent's module graph.
package machine

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Info is the machine as the /spec/ endpoint reports it. The JSON names
// are those of cAdvisor's MachineInfo, which kubelet clients read.
type Info struct {
	Timestamp       time.Time `json:"timestamp"`
	NumCores        int       `json:"num_cores"`
	CPUFrequencyKHz uint64    `json:"cpu_frequency_khz"`
	MemoryCapacity  uint64    `json:"memory_capacity"`
	MachineID       string    `json:"machine_id"`
	SystemUUID      string    `json:"system_uuid"`
	BootID          string    `json:"boot_id"`
	CloudProvider   string    `json:"cloud_provider"`
	InstanceType    string    `json:"instance_type"`
	KernelVersion   string    `json:"-"`
	OSImage         string    `json:"-"`
	Architecture    string    `json:"-"`
	OperatingSystem string    `json:"-"`
}

// Read gathers the machine facts. Only the core count and memory are
// required; identity files missing on some hosts are left empty.
func Read() (*Info, error) {
	mem, err := memTotal("/proc/meminfo")
	if err != nil {
		return nil, fmt.Errorf("read memory capacity: %w", err)
	}
	return &Info{
		Timestamp:       time.Now(),
		NumCores:        runtime.NumCPU(),
		CPUFrequencyKHz: cpuKHz(),
		MemoryCapacity:  mem,
		MachineID:       firstLine("/etc/machine-id"),
		SystemUUID:      strings.ToLower(firstLine("/sys/class/dmi/id/product_uuid")),
		BootID:          firstLine("/proc/sys/kernel/random/boot_id"),
		CloudProvider:   "Unknown",
		InstanceType:    "Unknown",
		KernelVersion:   firstLine("/proc/sys/kernel/osrelease"),
		OSImage:         osImage("/etc/os-release"),
		Architecture:    runtime.GOARCH,
		OperatingSystem: runtime.GOOS,
	}, nil
}

func firstLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	return strings.TrimSpace(string(line))
}

func memTotal(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseUint(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: MemTotal: %w", path, err)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("%s: no MemTotal line", path)
}

func cpuKHz() uint64 {
	if s := firstLine("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"); s != "" {
		if v, err := strconv.ParseUint(s, 10, 64); err == nil {
			return v
		}
	}
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "cpu MHz" {
			if mhz, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				return uint64(mhz * 1000)
			}
		}
	}
	return 0
}

func osImage(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// NodeIPs returns the node's addresses for status: the source address of
// the default route first, else the first global unicast address, else
// loopback.
func NodeIPs() []string {
	var out []string
	if c, err := net.Dial("udp4", "192.0.2.1:9"); err == nil {
		// Connecting a UDP socket sends nothing; it only picks the route.
		out = append(out, c.LocalAddr().(*net.UDPAddr).IP.String())
		c.Close()
	}
	if len(out) == 0 {
		addrs, _ := net.InterfaceAddrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.IsGlobalUnicast() && ipn.IP.To4() != nil {
				out = append(out, ipn.IP.String())
				break
			}
		}
	}
	if len(out) == 0 {
		out = append(out, "127.0.0.1")
	}
	return out
}

// Hostname returns the lowercased hostname, the default node name.
func Hostname() (string, error) {
	h, err := os.Hostname()
	if err != nil {
		return "", err
	}
	return strings.ToLower(strings.TrimSpace(h)), nil
}
