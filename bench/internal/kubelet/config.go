package kubelet

import (
	"fmt"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"sigs.k8s.io/yaml"
)

// Config describes one kubelet. Dir is the only required path; Bin and
// CRIEndpoint are required too.
type Config struct {
	Bin         string // the kubelet binary (scripts/install-kube.sh builds it)
	CRIEndpoint string // the runtime's unix socket path
	// Dir belongs to the kubelet for the whole run and is removed by
	// Cleanup: the root dir, manifests, pod logs, certs, config and log.
	Dir string
	// ReadOnlyPort serves /pods without authentication on 127.0.0.1; 0
	// picks a free port.
	ReadOnlyPort int
	// HealthzPort serves /healthz on 127.0.0.1; 0 disables it.
	HealthzPort int
	// Port is the authenticated HTTPS port, which cannot be turned off;
	// 0 picks a free port so that two kubelets never fight over 10250.
	Port int
	// CgroupRoot is the parent of the kubelet's kubepods hierarchy, e.g.
	// /podline-bench-kubelet. Start creates it in every hierarchy (removing
	// what an earlier run left there); Cleanup removes it. It belongs to
	// one kubelet at a time. Empty means /podline-bench-kubelet.
	CgroupRoot string
	// NodeName is the --hostname-override; static pods are named
	// <name>-<NodeName>. Empty means "bench".
	NodeName string
	// NodeIP is the --node-ip. Empty means the address of the interface
	// holding the default route, which is what the kubelet would find
	// itself, but only after a DNS lookup of NodeName on every pod
	// admission (standalone mode has no Node object to cache); where DNS
	// drops a query now and then, that stalls pod admission for seconds.
	NodeIP string
	// Kubeconfig, when set, joins the kubelet to that API server as node
	// NodeName (it registers the Node itself); empty is standalone mode.
	Kubeconfig string
	// NodeLabels are set on the Node when it registers (cluster mode).
	NodeLabels map[string]string
	// MaxPods is the kubelet's pod limit; 0 means 110, the kubelet default.
	MaxPods int
	// Verbosity is the kubelet's -v; 0 is what a production node runs.
	Verbosity int
}

// Defaults for the zero fields of Config.
const (
	DefaultCgroupRoot = "/podline-bench-kubelet"
	DefaultNodeName   = "bench"
	defaultMaxPods    = 110
)

// ManifestDir is the static pod directory: write pod manifests here.
func (c Config) ManifestDir() string { return filepath.Join(c.Dir, "manifests") }

// RootDir is the kubelet's --root-dir.
func (c Config) RootDir() string { return filepath.Join(c.Dir, "root") }

// PodLogsDir is where the kubelet creates pod log directories.
func (c Config) PodLogsDir() string { return filepath.Join(c.Dir, "pod-logs") }

// ConfigPath is the KubeletConfiguration file Start writes.
func (c Config) ConfigPath() string { return filepath.Join(c.Dir, "kubelet.yaml") }

// LogPath is the kubelet's stdout and stderr.
func (c Config) LogPath() string { return filepath.Join(c.Dir, "kubelet.log") }

// certDir would default to /var/lib/kubelet/pki, outside Dir.
func (c Config) certDir() string { return filepath.Join(c.Dir, "pki") }

// withDefaults fills the zero fields that have defaults and checks the
// required ones.
func (c Config) withDefaults() (Config, error) {
	if c.Bin == "" || c.CRIEndpoint == "" || c.Dir == "" {
		return c, fmt.Errorf("kubelet config: Bin, CRIEndpoint and Dir are required")
	}
	if !filepath.IsAbs(c.Dir) {
		return c, fmt.Errorf("kubelet config: Dir %q is not absolute", c.Dir)
	}
	if c.CgroupRoot == "" {
		c.CgroupRoot = DefaultCgroupRoot
	}
	// The cgroup root is created and later removed recursively: a path
	// like "/" or one outside the hierarchy must never get here.
	clean := filepath.Clean("/" + c.CgroupRoot)
	if clean == "/" || strings.Contains(c.CgroupRoot, "..") {
		return c, fmt.Errorf("kubelet config: CgroupRoot %q must name a cgroup below the root", c.CgroupRoot)
	}
	c.CgroupRoot = clean
	if c.NodeName == "" {
		c.NodeName = DefaultNodeName
	}
	if c.MaxPods == 0 {
		c.MaxPods = defaultMaxPods
	}
	if c.NodeIP == "" {
		c.NodeIP = defaultRouteIP()
	}
	return c, nil
}

// configuration is the KubeletConfiguration for c (after withDefaults): a
// production-like kubelet, minus what would make a benchmark measure
// something else or change the host: no API server unless Kubeconfig
// names one, no image GC, no
// eviction, no swap check, nothing listening beyond loopback.
func configuration(c Config) *kubeletv1beta1.KubeletConfiguration {
	healthz := int32(c.HealthzPort)
	return &kubeletv1beta1.KubeletConfiguration{
		TypeMeta: metav1.TypeMeta{
			APIVersion: kubeletv1beta1.SchemeGroupVersion.String(),
			Kind:       "KubeletConfiguration",
		},
		ContainerRuntimeEndpoint: "unix://" + c.CRIEndpoint,
		StaticPodPath:            c.ManifestDir(),
		PodLogsDir:               c.PodLogsDir(),
		VolumePluginDir:          filepath.Join(c.Dir, "volume-plugins"),

		Address:            "127.0.0.1",
		Port:               int32(c.Port),
		ReadOnlyPort:       int32(c.ReadOnlyPort),
		HealthzBindAddress: "127.0.0.1",
		HealthzPort:        &healthz,
		// The authenticated port cannot be turned off; without an API
		// server nothing can use it but anonymous callers.
		Authentication: kubeletv1beta1.KubeletAuthentication{
			Anonymous: kubeletv1beta1.KubeletAnonymousAuthentication{Enabled: ptr(true)},
			Webhook:   kubeletv1beta1.KubeletWebhookAuthentication{Enabled: ptr(false)},
		},
		Authorization: kubeletv1beta1.KubeletAuthorization{Mode: kubeletv1beta1.KubeletAuthorizationModeAlwaysAllow},

		CgroupDriver: "cgroupfs",
		CgroupRoot:   c.CgroupRoot,
		// The benchmark machines are cgroup v1 hybrid; 1.35+ refuses them
		// unless told otherwise.
		FailCgroupV1: ptr(false),
		FailSwapOn:   ptr(false),
		MaxPods:      int32(c.MaxPods),

		// Pulls are instant on the fake runtime; serialising them would
		// measure the queue, not the kubelet.
		SerializeImagePulls: ptr(false),
		// 100 % usage never happens, so the image GC never deletes the
		// images the manifests use.
		ImageGCHighThresholdPercent: ptr(int32(100)),
		ImageGCLowThresholdPercent:  ptr(int32(99)),
		// The eviction manager keeps running (it is part of what the
		// kubelet costs) but with thresholds a benchmark disk and 24 GiB
		// of memory never reach: the default 10 % nodefs could evict
		// every pod on a full-ish disk in the middle of a run.
		EvictionHard: map[string]string{
			"memory.available":   "50Mi",
			"nodefs.available":   "1%",
			"nodefs.inodesFree":  "1%",
			"imagefs.available":  "1%",
			"imagefs.inodesFree": "1%",
		},
		MergeDefaultEvictionSettings: ptr(false),
	}
}

// render returns the KubeletConfiguration file for c as YAML.
func render(c Config) ([]byte, error) {
	b, err := yaml.Marshal(configuration(c))
	if err != nil {
		return nil, fmt.Errorf("render kubelet configuration: %w", err)
	}
	return b, nil
}

// args are the command-line flags next to --config: the ones the kubelet
// has no configuration field for.
func args(c Config) []string {
	a := []string{
		"--config=" + c.ConfigPath(),
		"--root-dir=" + c.RootDir(),
		"--cert-dir=" + c.certDir(),
		"--hostname-override=" + c.NodeName,
		fmt.Sprintf("--v=%d", c.Verbosity),
	}
	if c.NodeIP != "" {
		a = append(a, "--node-ip="+c.NodeIP)
	}
	if c.Kubeconfig != "" {
		a = append(a, "--kubeconfig="+c.Kubeconfig)
		if len(c.NodeLabels) > 0 {
			var ls []string
			for _, k := range slices.Sorted(maps.Keys(c.NodeLabels)) {
				ls = append(ls, k+"="+c.NodeLabels[k])
			}
			a = append(a, "--node-labels="+strings.Join(ls, ","))
		}
	}
	return a
}

// defaultRouteIP is the local address the kernel would use to reach a
// remote network, or "" on a host without a default route. Connecting a
// UDP socket only consults the routing table; nothing is sent.
func defaultRouteIP() string {
	c, err := net.Dial("udp4", "203.0.113.1:9") // TEST-NET-3
	if err != nil {
		return ""
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP.String()
}

func ptr[T any](v T) *T { return &v }
