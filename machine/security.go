package machine

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// AppArmorEnabled reports whether the kernel enforces AppArmor profiles:
// the module is built in and enabled, and its securityfs directory is
// there to load profiles into.
func AppArmorEnabled() bool { return appArmorEnabled("/") }

func appArmorEnabled(root string) bool {
	if _, err := os.Stat(filepath.Join(root, "sys/kernel/security/apparmor")); err != nil {
		return false
	}
	b, err := os.ReadFile(filepath.Join(root, "sys/module/apparmor/parameters/enabled"))
	return err == nil && strings.HasPrefix(string(b), "Y")
}

// ThermalThrottlePaths lists the CPUs' thermal_throttle directories this
// host has, in CPU order. A container could read the host's throttling
// events there, so they are masked as the other /sys paths are.
func ThermalThrottlePaths() []string { return thermalThrottlePaths("/") }

func thermalThrottlePaths(root string) []string {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/cpu[0-9]*/thermal_throttle"))
	cpu := func(dir string) int {
		n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(dir)), "cpu"))
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return cpu(a) - cpu(b) })
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if rel, err := filepath.Rel(root, d); err == nil {
			out = append(out, "/"+rel)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
