package main

import (
	"flag"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/node"
	"github.com/podline/podline/sources"
	"github.com/podline/podline/stages"
	"github.com/podline/podline/sysctl"
)

// options are podline's command-line flags. The names and defaults are the
// kubelet's wherever the kubelet has the flag.
type options struct {
	podManifestPath    string
	fileCheckFrequency time.Duration
	manifestURL        string
	manifestURLHeader  headerFlag

	// The same, from files: credentials kept out of argv.
	manifestURLFile       string
	manifestURLHeaderFile string

	httpCheckFrequency time.Duration
	hostnameOverride   string
	nodeIP             string
	rootDir            string
	podLogsDir         string
	// seccompDefault confines containers that name no seccomp profile
	// with the runtime's default one.
	seccompDefault bool

	runtimeEndpoint string
	imageEndpoint   string
	requestTimeout  time.Duration
	// serializeImagePulls and maxParallelImagePulls (0: unset) bound the
	// pulls of different images, as the kubelet's.
	serializeImagePulls   bool
	maxParallelImagePulls int
	// imageCheck: when a pod may use an image already on the node.
	imageCheck imageCheckOptions

	maxPods        int
	kubeReserved   string
	podMaxPids     int64
	systemReserved string
	evictionHard   string
	cgroupRoot     string
	cgroupsPerQOS  bool
	cgroupDriver   string // --cgroup-driver, then the driver in use (the runtime's, if it says)
	clusterDNS     listFlag
	clusterDomain  string
	resolvConf     string
	// allowedUnsafeSysctls are allowed on top of the safe sysctls.
	allowedUnsafeSysctls listFlag

	healthzPort        int
	healthzBindAddress string
	readOnlyPort       int
	address            string

	relistPeriod   time.Duration
	plegMode       string
	plegSources    listFlag
	pipelineWindow int
	// startConcurrency is --start-concurrency as given.
	startConcurrency string
	stageWorkers     stageWorkersFlag
	queue            string
	verbosity        int
	version          bool

	// Cluster mode: all of it is off without --kubeconfig.
	kubeconfig                string
	registerNode              bool
	nodeLabels                listFlag
	registerWithTaints        listFlag
	nodeStatusUpdateFrequency time.Duration
	nodeStatusReportFrequency time.Duration
	nodeLeaseDurationSeconds  int
	kubeAPIQPS                float64
	kubeAPIBurst              int
	eventQPS                  float64
	eventBurst                int
	port                      int
	serve                     servingOptions

	// flagValues is every flag's value, for /configz.
	flagValues map[string]string
	// cmdline is the command line as /debug/pprof/cmdline shows it,
	// credentials redacted.
	cmdline []string
}

// stageWorkersFlag parses "stage=n" pairs over the defaults.
type stageWorkersFlag [stages.NumStages]int

func (f *stageWorkersFlag) String() string {
	var parts []string
	for s := stages.StageID(0); s < stages.NumStages; s++ {
		parts = append(parts, fmt.Sprintf("%s=%d", s, f[s]))
	}
	return strings.Join(parts, ",")
}

func (f *stageWorkersFlag) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(kv), "=")
		count, err := strconv.Atoi(n)
		if !ok || err != nil || count < 1 {
			return fmt.Errorf("%q: want stage=count with count ≥ 1", kv)
		}
		found := false
		for s := stages.StageID(0); s < stages.NumStages; s++ {
			if s.String() == name {
				f[s], found = count, true
			}
		}
		if !found {
			return fmt.Errorf("%q: no stage named %q", kv, name)
		}
	}
	return nil
}

// listFlag collects a repeatable, comma-separated flag.
type listFlag []string

func (l *listFlag) String() string { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			*l = append(*l, s)
		}
	}
	return nil
}

func newFlagSet(o *options) *flag.FlagSet {
	fs := flag.NewFlagSet("podline", flag.ContinueOnError)
	fs.StringVar(&o.podManifestPath, "pod-manifest-path", "/etc/kubernetes/manifests", "Directory (or file) of static pod manifests; empty disables the file source.")
	fs.DurationVar(&o.fileCheckFrequency, "file-check-frequency", sources.DefaultFileCheckPeriod, "Full rescan period of --pod-manifest-path, on top of inotify.")
	fs.StringVar(&o.manifestURL, "manifest-url", "", "URL to poll for pod manifests.")
	fs.Var(&o.manifestURLHeader, "manifest-url-header", "Headers for --manifest-url requests, 'key:value' (comma-separated, repeatable).")
	fs.StringVar(&o.manifestURLFile, "manifest-url-file", "", "File holding the --manifest-url (mode 0600), so credentials in it are not on the command line.")
	fs.StringVar(&o.manifestURLHeaderFile, "manifest-url-header-file", "", "File of --manifest-url-header headers, one 'Key: value' a line (mode 0600), so credentials in them are not on the command line.")
	fs.DurationVar(&o.httpCheckFrequency, "http-check-frequency", sources.DefaultHTTPCheckPeriod, "Polling period of --manifest-url.")
	fs.StringVar(&o.hostnameOverride, "hostname-override", "", "Node name to use instead of the hostname.")
	fs.StringVar(&o.nodeIP, "node-ip", "", "Node IP address reported as the host IP; default: the source address of the default route.")
	fs.StringVar(&o.rootDir, "root-dir", "/var/lib/podline", "Directory for pod data (volumes).")
	fs.StringVar(&o.podLogsDir, "pod-logs-dir", "/var/log/pods", "Directory of the pods' CRI log directories.")
	fs.BoolVar(&o.seccompDefault, "seccomp-default", false, "Run containers whose pod and container name no seccomp profile under the runtime's default profile (RuntimeDefault) instead of none.")
	fs.StringVar(&o.runtimeEndpoint, "container-runtime-endpoint", "unix:///run/containerd/containerd.sock", "CRI runtime service endpoint.")
	fs.StringVar(&o.imageEndpoint, "image-service-endpoint", "", "CRI image service endpoint; default: the runtime endpoint.")
	fs.DurationVar(&o.requestTimeout, "runtime-request-timeout", cri.DefaultRequestTimeout, "Timeout of every runtime request except pulls, log streams and exec.")
	fs.BoolVar(&o.serializeImagePulls, "serialize-image-pulls", true, "Pull one image at a time. Pods that need an image being pulled always share that pull.")
	fs.IntVar(&o.maxParallelImagePulls, "max-parallel-image-pulls", 0, "Most image pulls at once with --serialize-image-pulls=false; 0 (unset) is unlimited.")
	fs.IntVar(&o.maxPods, "max-pods", 110, "Number of pods this node can run.")
	fs.Int64Var(&o.podMaxPids, "pod-max-pids", -1, "Maximum number of processes in each pod (pids.max of the pod cgroup); -1 or 0: no limit.")
	fs.StringVar(&o.kubeReserved, "kube-reserved", "", "Resources reserved for Kubernetes system daemons, e.g. 'cpu=100m,memory=256Mi,ephemeral-storage=1Gi,pid=1000'.")
	fs.StringVar(&o.systemReserved, "system-reserved", "", "Resources reserved for the operating system, same form as --kube-reserved.")
	fs.StringVar(&o.evictionHard, "eviction-hard", node.DefaultEvictionHard, "Hard eviction thresholds; the memory and nodefs ones are also taken off allocatable.")
	fs.StringVar(&o.cgroupRoot, "cgroup-root", "/", "Root cgroup for pods.")
	fs.BoolVar(&o.cgroupsPerQOS, "cgroups-per-qos", true, "Create pod cgroups under kubepods/<qos>.")
	fs.StringVar(&o.cgroupDriver, "cgroup-driver", string(cgroupfs.DriverCgroupfs), "How pod cgroups are made: 'cgroupfs' (directories) or 'systemd' (slice units; needs cgroup v2). A runtime that reports its driver (CRI RuntimeConfig) decides instead, as for the kubelet.")
	fs.Var(&o.clusterDNS, "cluster-dns", "Cluster DNS server IPs (comma-separated) for dnsPolicy ClusterFirst pods.")
	fs.StringVar(&o.clusterDomain, "cluster-domain", "", "Cluster domain added to pods' DNS search list.")
	fs.StringVar(&o.resolvConf, "resolv-conf", "/etc/resolv.conf", "Resolver file pods with dnsPolicy Default inherit; empty for none.")
	fs.Var(&o.allowedUnsafeSysctls, "allowed-unsafe-sysctls", "Unsafe sysctls (or patterns ending in '*') pods may set on top of the safe ones, comma-separated, repeatable; namespaced ones only. Use at your own risk.")
	fs.IntVar(&o.healthzPort, "healthz-port", 10248, "Port of the /healthz endpoint; 0 disables it.")
	fs.StringVar(&o.healthzBindAddress, "healthz-bind-address", "127.0.0.1", "Address of the /healthz endpoint.")
	fs.IntVar(&o.readOnlyPort, "read-only-port", 0, "Port of the unauthenticated read-only server (/pods, /spec/); 0 disables it.")
	fs.StringVar(&o.address, "address", "0.0.0.0", "Address the authenticated and read-only servers bind.")
	fs.StringVar(&o.plegMode, "pleg", "events", "How container changes are found: 'events' (CRI events, eBPF and cgroup notifications, with a periodic relist as a safety net) or 'relist' (a full relist every second, as the kubelet's generic PLEG).")
	fs.Var(&o.plegSources, "pleg-sources", "Event sources to use with --pleg=events (comma-separated: cri, ebpf, cgroup); default all.")
	fs.DurationVar(&o.relistPeriod, "relist-period", 0, "Period of the full runtime relist; default 5m with --pleg=events (a safety net, as the kubelet's evented PLEG), 1s with --pleg=relist.")
	fs.IntVar(&o.pipelineWindow, "pipeline-window", 1024, "Pod passes in flight in the stage pipeline at once; producers wait beyond it.")
	o.stageWorkers = stageWorkersFlag(stages.DefaultWorkers)
	fs.StringVar(&o.queue, "queue", stages.QueueLockFree.String(), "Stage queue implementation: 'lockfree' (lock-free ring with parked workers) or 'channel' (buffered Go channels, a baseline for benchmarks).")
	fs.StringVar(&o.startConcurrency, "start-concurrency", "adaptive", "Pod starts let into the sandbox and containers stages at once, in arrival order: 'adaptive' (a limit that follows the runtime's start latency), a number (a fixed limit), or 0 (only the stage workers bound them).")
	fs.Var(&o.stageWorkers, "stage-workers", "Workers per pipeline stage, e.g. 'sandbox=8,containers=8' (stages: admit, volumes, sandbox, containers, status).")
	fs.IntVar(&o.verbosity, "v", 0, "Log verbosity; 4 and above logs debug messages.")
	fs.BoolVar(&o.version, "version", false, "Print the version and exit.")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig to reach the API server with; empty runs standalone (static and URL pods only).")
	fs.BoolVar(&o.registerNode, "register-node", true, "Register the node with the API server.")
	fs.Var(&o.nodeLabels, "node-labels", "Labels to add when registering the node, 'key=value' (comma-separated, repeatable).")
	fs.Var(&o.registerWithTaints, "register-with-taints", "Taints to register the node with, 'key=value:Effect' (comma-separated, repeatable).")
	fs.DurationVar(&o.nodeStatusUpdateFrequency, "node-status-update-frequency", 10*time.Second, "How often the node status is computed; it is sent when it changed.")
	fs.DurationVar(&o.nodeStatusReportFrequency, "node-status-report-frequency", 5*time.Minute, "How often the node status is sent when nothing changed.")
	fs.IntVar(&o.nodeLeaseDurationSeconds, "node-lease-duration-seconds", 40, "Duration of the node lease; it is renewed every quarter of it.")
	fs.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 50, "Requests per second to the API server.")
	fs.IntVar(&o.kubeAPIBurst, "kube-api-burst", 100, "Burst of requests to the API server.")
	fs.Float64Var(&o.eventQPS, "event-qps", 50, "Events per second sent to the API server (a client of their own).")
	fs.IntVar(&o.eventBurst, "event-burst", 100, "Burst of events sent to the API server.")
	fs.IntVar(&o.port, "port", 10250, "Port of the authenticated server (logs, exec, attach, port-forward, stats), on --address; 0 disables it.")
	addServingFlags(fs, &o.serve)
	addImageCheckFlags(fs, &o.imageCheck)
	return fs
}

// validate checks values the flag package cannot, naming the flag.
func (o *options) validate() error {
	checks := []struct {
		bad  bool
		flag string
		why  string
	}{
		{o.fileCheckFrequency <= 0, "--file-check-frequency", "must be positive"},
		{o.httpCheckFrequency <= 0, "--http-check-frequency", "must be positive"},
		{o.requestTimeout <= 0, "--runtime-request-timeout", "must be positive"},
		{o.relistPeriod < 0, "--relist-period", "must not be negative"},
		{o.plegMode != "events" && o.plegMode != "relist", "--pleg", "must be 'events' or 'relist'"},
		{o.maxPods < 0, "--max-pods", "must not be negative"},
		{o.podMaxPids < -1, "--pod-max-pids", "must be -1 (no limit) or more"},
		{o.maxParallelImagePulls < 0, "--max-parallel-image-pulls", "must not be negative"},
		{o.serializeImagePulls && o.maxParallelImagePulls > 1, "--max-parallel-image-pulls", "cannot be larger than 1 unless --serialize-image-pulls=false"},
		{o.pipelineWindow < 1, "--pipeline-window", "must be at least 1"},
		{o.healthzPort < 0 || o.healthzPort > 65535, "--healthz-port", "must be 0-65535"},
		{o.readOnlyPort < 0 || o.readOnlyPort > 65535, "--read-only-port", "must be 0-65535"},
		{o.rootDir == "", "--root-dir", "must be set"},
		{o.nodeIP != "" && net.ParseIP(o.nodeIP) == nil, "--node-ip", "is not an IP address"},
		{o.nodeStatusUpdateFrequency <= 0, "--node-status-update-frequency", "must be positive"},
		{o.nodeStatusReportFrequency < 0, "--node-status-report-frequency", "must not be negative"},
		{o.nodeLeaseDurationSeconds <= 0, "--node-lease-duration-seconds", "must be positive"},
		// Written as !(x > 0) so NaN is refused too; +Inf is no rate.
		{!(o.kubeAPIQPS > 0) || math.IsInf(o.kubeAPIQPS, 1), "--kube-api-qps", "must be a positive number"},
		{o.kubeAPIBurst < 1, "--kube-api-burst", "must be at least 1"},
		{!(o.eventQPS > 0) || math.IsInf(o.eventQPS, 1), "--event-qps", "must be a positive number"},
		{o.eventBurst < 1, "--event-burst", "must be at least 1"},
		{o.port < 0 || o.port > 65535, "--port", "must be 0-65535"},
	}
	for _, c := range checks {
		if c.bad {
			return fmt.Errorf("%s %s", c.flag, c.why)
		}
	}
	if _, err := cgroupfs.ParseDriver(o.cgroupDriver); err != nil {
		return fmt.Errorf("--cgroup-driver: %w", err)
	}
	if _, err := stages.ParseQueueKind(o.queue); err != nil {
		return fmt.Errorf("--queue must be 'lockfree' or 'channel', got %q", o.queue)
	}
	if _, err := o.startGate(); err != nil {
		return err
	}
	if _, err := o.imageCheck.checkPolicy(); err != nil {
		return err
	}
	if _, err := node.ParseResourceList(o.kubeReserved); err != nil {
		return fmt.Errorf("--kube-reserved: %w", err)
	}
	if _, err := node.ParseResourceList(o.systemReserved); err != nil {
		return fmt.Errorf("--system-reserved: %w", err)
	}
	if _, err := node.ParseThresholds(o.evictionHard); err != nil {
		return fmt.Errorf("--eviction-hard: %w", err)
	}
	if _, err := sysctl.NewAllowlist("", o.allowedUnsafeSysctls); err != nil {
		return fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}
	if err := o.serve.validate(o.kubeconfig != ""); err != nil {
		return err
	}
	for _, s := range o.plegSources {
		if s != "cri" && s != "ebpf" && s != "cgroup" {
			return fmt.Errorf("--pleg-sources: unknown source %q (want cri, ebpf, cgroup)", s)
		}
	}
	for _, ip := range o.clusterDNS {
		if net.ParseIP(ip) == nil {
			return fmt.Errorf("--cluster-dns: %q is not an IP address", ip)
		}
	}
	return nil
}

// effectiveRelistPeriod is --relist-period, or the mode's default.
func (o *options) effectiveRelistPeriod() time.Duration {
	switch {
	case o.relistPeriod > 0:
		return o.relistPeriod
	case o.plegMode == "relist":
		return time.Second
	}
	// The kubelet's relist period under its evented PLEG. The events
	// (three sources of them) carry every change; the relist is a safety
	// net whose listing of every sandbox and container was, at 10,000
	// pods and once a minute, two thirds of the idle agent's CPU.
	return eventsRelistPeriod
}

const eventsRelistPeriod = 5 * time.Minute

// plegSource reports whether an event source is enabled.
func (o *options) plegSource(name string) bool {
	return o.plegMode == "events" && (len(o.plegSources) == 0 || slices.Contains(o.plegSources, name))
}

// startGate is the gate --start-concurrency asks for: nil for 0. The
// adaptive limit goes no higher than the workers of the sandbox and
// containers stages together, which bound the starts in them anyway.
func (o *options) startGate() (*stages.StartGate, error) {
	if o.startConcurrency == "adaptive" {
		return stages.NewAdaptiveStartGate(o.stageWorkers[stages.StageSandbox] + o.stageWorkers[stages.StageContainers]), nil
	}
	n, err := strconv.Atoi(o.startConcurrency)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("--start-concurrency must be 'adaptive' or a number of starts (0: no limit), got %q", o.startConcurrency)
	}
	if n == 0 {
		return nil, nil
	}
	return stages.NewFixedStartGate(n), nil
}

// absolutePaths makes the directories podline hands the runtime absolute:
// the runtime resolves a relative path from its own working directory,
// so a relative --root-dir made every container's /etc/hosts mount fail
// inside runc.
func (o *options) absolutePaths() error {
	for _, d := range []struct {
		flag string
		path *string
	}{{"--root-dir", &o.rootDir}, {"--pod-logs-dir", &o.podLogsDir}} {
		if *d.path == "" || filepath.IsAbs(*d.path) {
			continue
		}
		abs, err := filepath.Abs(*d.path)
		if err != nil {
			return fmt.Errorf("%s %q: %w", d.flag, *d.path, err)
		}
		*d.path = abs
	}
	return nil
}

// podPidsLimit is --pod-max-pids as the pod cgroups take it: nil leaves
// pids.max alone (unlimited), as the kubelet does for -1 and 0.
func (o *options) podPidsLimit() *int64 {
	if o.podMaxPids <= 0 {
		return nil
	}
	return &o.podMaxPids
}
