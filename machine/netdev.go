package machine

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// Interface is one network interface's cumulative counters.
type Interface struct {
	Name              string
	RxBytes, RxErrors uint64
	TxBytes, TxErrors uint64
}

// NetDev returns the interfaces of the network namespace of process pid
// (a pod's sandbox process gives the pod's network), from
// /proc/<pid>/net/dev, without the loopback.
func NetDev(pid int) ([]Interface, error) {
	return ReadNetDev("/proc/" + strconv.Itoa(pid) + "/net/dev")
}

// ReadNetDev reads a /proc/<pid>/net/dev file, without the loopback.
func ReadNetDev(path string) ([]Interface, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read network stats: %w", err)
	}
	ifaces, err := ParseNetDev(data)
	if err != nil {
		return nil, fmt.Errorf("read network stats: %s: %w", path, err)
	}
	return ifaces, nil
}

// ParseNetDev parses the text of /proc/net/dev: two header lines, then
// "name: rx_bytes rx_packets rx_errs ... tx_bytes tx_packets tx_errs ...",
// eight receive and eight transmit counters. The loopback "lo" is left
// out: its traffic never leaves the pod.
func ParseNetDev(data []byte) ([]Interface, error) {
	var out []Interface
	const (
		rxBytes, rxErrs = 0, 2
		txBytes, txErrs = 8, 10
		counters        = 16
	)
	for line := range bytes.Lines(data) {
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue // the headers ("Inter-|   Receive ...")
		}
		name = bytes.TrimSpace(name)
		if string(name) == "lo" {
			continue
		}
		f := bytes.Fields(rest)
		if len(name) == 0 || len(f) != counters {
			return nil, fmt.Errorf("line %q: want an interface and %d counters", bytes.TrimSpace(line), counters)
		}
		var v [counters]uint64
		for _, i := range [...]int{rxBytes, rxErrs, txBytes, txErrs} {
			n, err := strconv.ParseUint(string(f[i]), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("interface %s: %w", name, err)
			}
			v[i] = n
		}
		out = append(out, Interface{
			Name:    string(name),
			RxBytes: v[rxBytes], RxErrors: v[rxErrs],
			TxBytes: v[txBytes], TxErrors: v[txErrs],
		})
	}
	return out, nil
}
