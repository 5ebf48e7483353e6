package machine

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeTree makes the named directories and files (content after "=")
// under a new root.
func fakeTree(t *testing.T, entries ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, e := range entries {
		name, content, isFile := strings.Cut(e, "=")
		p := filepath.Join(root, name)
		dir := p
		if isFile {
			dir = filepath.Dir(p)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if isFile {
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

func TestAppArmorEnabled(t *testing.T) {
	f := func(name string, want bool, entries ...string) {
		t.Helper()
		if got := appArmorEnabled(fakeTree(t, entries...)); got != want {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	f("no AppArmor in the kernel", false)
	f("enabled", true, "sys/kernel/security/apparmor", "sys/module/apparmor/parameters/enabled=Y\n")
	f("disabled at boot", false, "sys/kernel/security/apparmor", "sys/module/apparmor/parameters/enabled=N\n")
	f("securityfs not mounted", false, "sys/module/apparmor/parameters/enabled=Y\n")
}

func TestThermalThrottlePaths(t *testing.T) {
	root := fakeTree(t, "sys/devices/system/cpu/cpu10/thermal_throttle", "sys/devices/system/cpu/cpu2/thermal_throttle",
		"sys/devices/system/cpu/cpu3", "sys/devices/system/cpu/cpufreq")
	want := []string{"/sys/devices/system/cpu/cpu2/thermal_throttle", "/sys/devices/system/cpu/cpu10/thermal_throttle"}
	if got := thermalThrottlePaths(root); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := thermalThrottlePaths(fakeTree(t)); got != nil {
		t.Errorf("none: got %v", got)
	}
	if !reflect.DeepEqual(thermalThrottlePaths("/"), ThermalThrottlePaths()) {
		t.Error("the host's paths differ")
	}
}
