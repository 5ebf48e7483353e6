package kubelet

import (
	"path/filepath"
	"strings"
	"testing"

	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

func TestRender(t *testing.T) {
	cfg, err := Config{
		Bin: "/opt/kubelet", CRIEndpoint: "/run/fake/cri.sock", Dir: "/tmp/kb",
		ReadOnlyPort: 10255, HealthzPort: 10248, Port: 10250, MaxPods: 1500,
	}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	y, err := render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Read back through the kubelet's own type, as the kubelet reads it.
	var got kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(y, &got); err != nil {
		t.Fatalf("decode rendered configuration: %v\n%s", err, y)
	}
	eq := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	eq("kind", got.Kind, "KubeletConfiguration")
	eq("apiVersion", got.APIVersion, "kubelet.config.k8s.io/v1beta1")
	eq("containerRuntimeEndpoint", got.ContainerRuntimeEndpoint, "unix:///run/fake/cri.sock")
	eq("staticPodPath", got.StaticPodPath, "/tmp/kb/manifests")
	eq("podLogsDir", got.PodLogsDir, "/tmp/kb/pod-logs")
	eq("address", got.Address, "127.0.0.1")
	eq("readOnlyPort", got.ReadOnlyPort, int32(10255))
	eq("port", got.Port, int32(10250))
	eq("healthzBindAddress", got.HealthzBindAddress, "127.0.0.1")
	eq("maxPods", got.MaxPods, int32(1500))
	eq("cgroupDriver", got.CgroupDriver, "cgroupfs")
	eq("cgroupRoot", got.CgroupRoot, DefaultCgroupRoot)
	eq("authorization.mode", got.Authorization.Mode, kubeletv1beta1.KubeletAuthorizationModeAlwaysAllow)
	// Pointers: nil would mean the kubelet's default, which for each of
	// these is the opposite of what the bench needs.
	deref := func(name string, p *bool, want bool) {
		t.Helper()
		if p == nil {
			t.Errorf("%s unset, want %v", name, want)
			return
		}
		eq(name, *p, want)
	}
	deref("failCgroupV1", got.FailCgroupV1, false)
	deref("failSwapOn", got.FailSwapOn, false)
	deref("serializeImagePulls", got.SerializeImagePulls, false)
	deref("authentication.anonymous.enabled", got.Authentication.Anonymous.Enabled, true)
	deref("authentication.webhook.enabled", got.Authentication.Webhook.Enabled, false)
	deref("mergeDefaultEvictionSettings", got.MergeDefaultEvictionSettings, false)
	if got.HealthzPort == nil || *got.HealthzPort != 10248 {
		t.Errorf("healthzPort = %v, want 10248", got.HealthzPort)
	}
	if got.ImageGCHighThresholdPercent == nil || *got.ImageGCHighThresholdPercent != 100 ||
		got.ImageGCLowThresholdPercent == nil || *got.ImageGCLowThresholdPercent >= 100 {
		t.Errorf("image GC thresholds %v/%v, want high 100 and low below it",
			got.ImageGCHighThresholdPercent, got.ImageGCLowThresholdPercent)
	}
	// Every signal the kubelet has a default for must be set low, or the
	// default (e.g. nodefs 10 %) applies to the ones left out.
	for _, sig := range []string{"memory.available", "nodefs.available", "nodefs.inodesFree", "imagefs.available"} {
		v, ok := got.EvictionHard[sig]
		if !ok {
			t.Errorf("evictionHard lacks %s", sig)
			continue
		}
		if strings.HasSuffix(v, "%") && v != "1%" {
			t.Errorf("evictionHard %s = %s, want at most 1%%", sig, v)
		}
	}
}

func TestRenderDisabledHealthz(t *testing.T) {
	cfg, err := Config{Bin: "k", CRIEndpoint: "/s", Dir: "/d"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	y, err := render(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var got kubeletv1beta1.KubeletConfiguration
	if err := yaml.UnmarshalStrict(y, &got); err != nil {
		t.Fatal(err)
	}
	// 0 disables the endpoint; leaving the field out would serve it on
	// the default 10248.
	if got.HealthzPort == nil || *got.HealthzPort != 0 {
		t.Errorf("healthzPort = %v, want an explicit 0", got.HealthzPort)
	}
	if got.MaxPods != defaultMaxPods {
		t.Errorf("maxPods = %d, want the kubelet default %d", got.MaxPods, defaultMaxPods)
	}
}

func TestWithDefaults(t *testing.T) {
	base := Config{Bin: "/k", CRIEndpoint: "/s", Dir: "/d"}
	f := func(name string, mutate func(*Config), wantErr bool, wantRoot string) {
		t.Helper()
		c := base
		mutate(&c)
		got, err := c.withDefaults()
		if (err != nil) != wantErr {
			t.Fatalf("%s: err = %v, want error %v", name, err, wantErr)
		}
		if err == nil && got.CgroupRoot != wantRoot {
			t.Errorf("%s: CgroupRoot = %q, want %q", name, got.CgroupRoot, wantRoot)
		}
	}
	f("defaults", func(*Config) {}, false, DefaultCgroupRoot)
	f("relative root made absolute", func(c *Config) { c.CgroupRoot = "bench/k" }, false, "/bench/k")
	f("trailing slash", func(c *Config) { c.CgroupRoot = "/bench/" }, false, "/bench")
	f("no bin", func(c *Config) { c.Bin = "" }, true, "")
	f("no endpoint", func(c *Config) { c.CRIEndpoint = "" }, true, "")
	f("no dir", func(c *Config) { c.Dir = "" }, true, "")
	f("relative dir", func(c *Config) { c.Dir = "kb" }, true, "")
	f("cgroup root is the root", func(c *Config) { c.CgroupRoot = "/" }, true, "")
	f("cgroup root escapes", func(c *Config) { c.CgroupRoot = "/a/../.." }, true, "")
}

// Nothing the kubelet writes may land outside Dir: its defaults point at
// /var/lib/kubelet, /var/log/pods and /usr/libexec.
func TestPathsStayInDir(t *testing.T) {
	cfg, err := Config{Bin: "/k", CRIEndpoint: "/s", Dir: "/tmp/kb", NodeName: "n1", NodeIP: "192.0.2.7"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	kc := configuration(cfg)
	paths := []string{kc.StaticPodPath, kc.PodLogsDir, kc.VolumePluginDir}
	flags := map[string]string{}
	for _, a := range args(cfg) {
		k, v, _ := strings.Cut(a, "=")
		flags[k] = v
	}
	for _, f := range []string{"--config", "--root-dir", "--cert-dir"} {
		if flags[f] == "" {
			t.Errorf("flag %s missing from %v", f, args(cfg))
		}
		paths = append(paths, flags[f])
	}
	for _, p := range paths {
		if rel, err := filepath.Rel(cfg.Dir, p); err != nil || strings.HasPrefix(rel, "..") || rel == "." {
			t.Errorf("%s is not inside %s", p, cfg.Dir)
		}
	}
	if flags["--hostname-override"] != "n1" {
		t.Errorf("--hostname-override = %q, want n1", flags["--hostname-override"])
	}
	// Without it the kubelet resolves its node name on every admission.
	if flags["--node-ip"] != "192.0.2.7" {
		t.Errorf("--node-ip = %q, want 192.0.2.7", flags["--node-ip"])
	}
	if flags["--config"] != cfg.ConfigPath() {
		t.Errorf("--config = %q, want %q", flags["--config"], cfg.ConfigPath())
	}
}

// Cluster mode adds the API server and the labels the bench's pods select
// the node by; standalone mode has neither flag.
func TestArgsClusterMode(t *testing.T) {
	flagsOf := func(c Config) map[string]string {
		c, err := c.withDefaults()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, a := range args(c) {
			k, v, _ := strings.Cut(a, "=")
			m[k] = v
		}
		return m
	}
	base := Config{Bin: "/k", CRIEndpoint: "/s", Dir: "/d", NodeIP: "192.0.2.7"}
	if f := flagsOf(base); f["--kubeconfig"] != "" || f["--node-labels"] != "" {
		t.Errorf("standalone flags %v name an API server or labels", f)
	}
	c := base
	c.Kubeconfig = "/cp/node.kubeconfig"
	c.NodeLabels = map[string]string{"b": "2", "a": "1"}
	f := flagsOf(c)
	if f["--kubeconfig"] != "/cp/node.kubeconfig" {
		t.Errorf("--kubeconfig = %q", f["--kubeconfig"])
	}
	if f["--node-labels"] != "a=1,b=2" {
		t.Errorf("--node-labels = %q, want a=1,b=2 (sorted)", f["--node-labels"])
	}
}
