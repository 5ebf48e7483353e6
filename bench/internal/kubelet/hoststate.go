package kubelet

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The kubelet changes host-wide things that outlive it, whatever its root
// dir: it sets kernel tunables it wants (unless protectKernelDefaults,
// which makes it refuse to start instead), creates iptables chains for
// other components, opens its device-plugin socket under a fixed
// /var/lib/kubelet, and links every container log into /var/log/containers.
// hostState remembers how they were so that Cleanup puts them back.
type hostState struct {
	Sysctls map[string]string `json:"sysctls"` // /proc/sys path → value before any kubelet ran
	Chains  []chain           `json:"chains"`  // kubelet chains that did not exist before
	Created []string          `json:"created"` // kubeletHostDirs that did not exist before
	dir     string            // this kubelet's Config.Dir
}

// hostRecord keeps the host's state from before the first kubelet until a
// Cleanup has put it back. A kubelet that starts while another runs, or
// after one was killed before its Cleanup, would otherwise take the
// kubelet's settings for the host's own. On tmpfs: a reboot resets the
// host and the record together.
var hostRecord = "/run/podline-bench/kubelet-host.json"

// kubeletHostDirs are the fixed paths the kubelet creates, parents first.
var kubeletHostDirs = []string{
	"/var/lib/kubelet",
	"/var/lib/kubelet/device-plugins",
	"/var/log/containers",
}

// containerLogLinks is where the kubelet links container logs, by the
// name that log collectors expect.
var containerLogLinks = "/var/log/containers"

// kubeletSysctls are the tunables the kubelet's container manager sets,
// as paths under /proc/sys.
var kubeletSysctls = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

var procSys = "/proc/sys"

// chain is an iptables chain the kubelet creates, with the built-in chains
// that jump to it.
type chain struct {
	Bin       string   `json:"bin"`
	Table     string   `json:"table"`
	Name      string   `json:"name"`
	JumpsFrom []string `json:"jumpsFrom,omitempty"`
}

// iptablesBins are the tools whose tables the kubelet sets up.
var iptablesBins = []string{"iptables", "ip6tables"}

// kubeletChains are the chains the kubelet's network setup makes: a hint
// for other components about the iptables flavour, the martian-packet
// firewall (IPv4 only), and the canaries it watches for a flush.
func kubeletChains() []chain {
	var cs []chain
	for _, bin := range iptablesBins {
		cs = append(cs, chain{Bin: bin, Table: "mangle", Name: "KUBE-IPTABLES-HINT"})
		for _, t := range []string{"mangle", "nat", "filter"} {
			cs = append(cs, chain{Bin: bin, Table: t, Name: "KUBE-KUBELET-CANARY"})
		}
		if bin == "iptables" {
			cs = append(cs, chain{Bin: bin, Table: "filter", Name: "KUBE-FIREWALL", JumpsFrom: []string{"INPUT", "OUTPUT"}})
		}
	}
	return cs
}

// saveHostState returns the host's state from before any kubelet changed
// it: the record an earlier kubelet left, or else the host as it is now,
// which it records.
func saveHostState(dir string) (hostState, error) {
	var h hostState
	b, err := os.ReadFile(hostRecord)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &h); err != nil {
			return h, fmt.Errorf("host record %s (remove it if the host is as it should be): %w", hostRecord, err)
		}
	case errors.Is(err, fs.ErrNotExist):
		h = snapshotHost()
		if err := writeRecord(h); err != nil {
			return h, err
		}
	default:
		return h, fmt.Errorf("host record: %w", err)
	}
	h.dir = dir
	return h, nil
}

// snapshotHost reads the tunables and which kubelet chains and dirs are
// missing.
func snapshotHost() hostState {
	h := hostState{Sysctls: saveSysctls()}
	for _, d := range kubeletHostDirs {
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			h.Created = append(h.Created, d)
		}
	}
	for _, c := range kubeletChains() {
		if exists, err := c.exists(); err == nil && !exists {
			h.Chains = append(h.Chains, c)
		}
	}
	return h
}

func writeRecord(h hostState) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return fmt.Errorf("host record: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(hostRecord), 0o755); err != nil {
		return fmt.Errorf("host record: %w", err)
	}
	tmp := hostRecord + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("host record: %w", err)
	}
	if err := os.Rename(tmp, hostRecord); err != nil {
		return fmt.Errorf("host record: %w", err)
	}
	return nil
}

// saveSysctls reads the kubelet's tunables; one that cannot be read is
// not restored either.
func saveSysctls() map[string]string {
	m := make(map[string]string)
	for _, k := range kubeletSysctls {
		if v, err := os.ReadFile(filepath.Join(procSys, k)); err == nil {
			m[k] = strings.TrimSpace(string(v))
		}
	}
	return m
}

// restore writes back the tunables that changed, deletes what the kubelet
// created, and then the record: the host is as it was.
func (h hostState) restore() error {
	var errs []error
	for k, want := range h.Sysctls {
		p := filepath.Join(procSys, k)
		got, err := os.ReadFile(p)
		if err == nil && strings.TrimSpace(string(got)) == want {
			continue
		}
		if err := os.WriteFile(p, []byte(want), 0); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", k, want, err))
		}
	}
	for _, c := range h.Chains {
		if err := c.remove(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := removeLinksInto(containerLogLinks, h.dir); err != nil {
		errs = append(errs, err)
	}
	// Children were listed after their parents; a parent's RemoveAll
	// takes them along.
	for _, d := range h.Created {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, fmt.Errorf("remove kubelet host dir: %w", err))
		}
	}
	// Kept when something could not be put back, so the next Cleanup
	// tries again from the true original.
	if len(errs) == 0 {
		if err := os.Remove(hostRecord); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("host record: %w", err))
		}
		os.Remove(filepath.Dir(hostRecord)) // only if empty: it may hold others'
	}
	return errors.Join(errs...)
}

// removeLinksInto removes the symlinks in dir that point below target:
// the kubelet's links to its container logs, which dangle once its pod
// logs dir is gone. Other links are someone else's.
func removeLinksInto(dir, target string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("container log links: %w", err)
	}
	var errs []error
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		p := filepath.Join(dir, e.Name())
		dest, err := os.Readlink(p)
		if err != nil || !strings.HasPrefix(dest, target+"/") {
			continue
		}
		if err := os.Remove(p); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// iptables runs c's binary with -w (wait for the xtables lock).
func (c chain) iptables(args ...string) error {
	out, err := exec.Command(c.Bin, append([]string{"-w", "-t", c.Table}, args...)...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s -t %s %s: %w: %s", c.Bin, c.Table, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// exists reports whether the chain exists; an error means iptables itself
// is missing or broken, in which case the kubelet skips its setup too.
func (c chain) exists() (bool, error) {
	if _, err := exec.LookPath(c.Bin); err != nil {
		return false, err
	}
	err := c.iptables("-S", c.Name)
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return false, nil
	}
	return err == nil, err
}

// remove deletes the jumps to the chain, then the chain, if it exists.
func (c chain) remove() error {
	if exists, err := c.exists(); err != nil || !exists {
		return nil
	}
	for _, from := range c.JumpsFrom {
		// The kubelet may have added the jump more than once if the
		// canary fired; a bounded loop, in case -D keeps succeeding.
		for range 10 {
			if c.iptables("-D", from, "-j", c.Name) != nil {
				break
			}
		}
	}
	if err := c.iptables("-F", c.Name); err != nil {
		return err
	}
	return c.iptables("-X", c.Name)
}
