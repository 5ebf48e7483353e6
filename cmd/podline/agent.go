package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/kubeapi"
	"github.com/podline/podline/machine"
	"github.com/podline/podline/node"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
	"github.com/podline/podline/prober"
	"github.com/podline/podline/server"
	"github.com/podline/podline/sources"
	"github.com/podline/podline/stages"
	"github.com/podline/podline/stats"
	"github.com/podline/podline/sysctl"
	"github.com/podline/podline/volumes"
)

// agent is a wired podline. Fields are the parts; nothing here decides
// anything about pods.
type agent struct {
	o        *options
	log      *slog.Logger
	node     *stages.Node
	machine  *machine.Info
	runtime  *cri.Client
	cache    *pleg.Cache
	relister *pleg.Relister // loads the runtime state at start; the safety net
	plane    *pleg.Plane    // the event plane; nil with --pleg=relist
	// lifecycle are the loops that keep the runtime state current: the
	// relist, and in events mode the plane and its event sources.
	lifecycle []func(context.Context)
	pipeline  *stages.Pipeline
	admitter  *stages.Admitter
	statuses  *stages.StatusStore
	merger    *sources.Merger
	stats     *stats.Collector
	files     *sources.ManifestPath
	url       *sources.URLSource
	cluster   *cluster // nil without --kubeconfig
	// volumes fills and refreshes the content volumes: downwardAPI alone
	// without --kubeconfig.
	volumes *volumes.Source
	// prober runs every liveness, readiness and startup probe; a changed
	// result is an event for its pod.
	prober *prober.Manager
}

func newAgent(ctx context.Context, o *options, log *slog.Logger) (*agent, error) {
	a := &agent{o: o, log: log}
	if err := a.buildNode(); err != nil {
		return nil, err
	}
	rt, err := cri.Dial(ctx, o.runtimeEndpoint, o.imageEndpoint, o.requestTimeout)
	if err != nil {
		return nil, err
	}
	a.runtime = rt
	ver, err := rt.Version(ctx)
	if err != nil {
		return nil, err
	}
	log.Info("connected to runtime", "endpoint", o.runtimeEndpoint,
		"runtime", ver.GetRuntimeName(), "version", ver.GetRuntimeVersion())
	if err := a.chooseCgroupDriver(ctx, rt, ver.GetRuntimeName()); err != nil {
		return nil, err
	}
	if err := a.connectCluster(ctx); err != nil {
		return nil, err
	}
	var recorder stages.Recorder
	var content stages.ContentSource
	var envObjects stages.EnvSource
	var services stages.ServiceSource
	labels := node.Labels(a.node.Name, nil)
	var taints []v1.Taint
	if c := a.cluster; c != nil {
		recorder, content, labels = c.events, c.volumes, node.Labels(a.node.Name, c.labels)
		envObjects, services = c.volumes, c.services
		// Admission knows the taints the node registers with, when podline
		// registers it; it does not watch its Node for taints added later.
		if o.registerNode {
			if taints, err = node.ParseTaints(strings.Join(o.registerWithTaints, ",")); err != nil {
				return nil, fmt.Errorf("--register-with-taints: %w", err)
			}
		}
	}
	sysctls, err := sysctl.NewAllowlist(a.machine.KernelVersion, o.allowedUnsafeSysctls)
	if err != nil {
		return nil, fmt.Errorf("--allowed-unsafe-sysctls: %w", err)
	}

	a.cache = pleg.NewCache()
	a.statuses = stages.NewStatusStore()
	a.admitter = &stages.Admitter{Node: a.node, Labels: labels, Taints: taints, Sysctls: sysctls,
		Cache: a.cache, Events: recorder}
	notify := func(uid types.UID) { a.pipeline.Sync(uid) }
	a.volumes = volumes.New(nil, a.node.Allocatable)
	if a.cluster != nil {
		a.volumes = a.cluster.volumes
	}
	// A pod whose volumes fell stale gets a pass, whose volume stage
	// rewrites them.
	a.volumes.OnStale(notify)
	content = a.volumes
	a.relister = pleg.NewRelister(rt, a.cache, o.effectiveRelistPeriod(), notify, log)
	if err := a.buildLifecycle(notify); err != nil {
		return nil, err
	}
	tree, err := cgroupfs.NewTree(a.node.Cgroups, log)
	if err != nil {
		return nil, fmt.Errorf("cgroup tree: %w", err)
	}
	if err := tree.EnsureQOS(a.node.CPUMilli, a.node.MemoryBytes); err != nil {
		return nil, fmt.Errorf("QoS cgroups under %s: %w", o.cgroupRoot, err)
	}
	a.admitter.OnBurstableCPU = func(total int64) {
		if err := tree.SetBurstableCPU(total); err != nil {
			log.Warn("cannot update the burstable cgroup", "err", err)
		}
	}
	sandboxes := &stages.SandboxStage{Runtime: rt, Cache: a.cache, Node: a.node, Cgroups: tree, Limits: tree, PodPidsLimit: o.podPidsLimit(), Events: recorder}
	a.prober = prober.New(prober.Config{Exec: rt, Notify: notify, Recorder: recorder, Log: log})
	containers := &stages.ContainerStage{Runtime: rt, Images: rt, Cache: a.cache, Node: a.node, Events: recorder,
		Env: envObjects, Services: services, Probes: probes{a.prober}, Log: log}
	records, err := openPullRecords(ctx, o, rt, log)
	if err != nil {
		return nil, err
	}
	containers.Pulls = stages.NewImagePuller(rt, records, o.serializeImagePulls, o.maxParallelImagePulls)
	if a.cluster != nil {
		containers.PullSecrets = kubeapi.NewPullSecrets(a.cluster.client)
	}
	if a.plane != nil {
		sandboxes.Watcher, containers.Watcher = a.plane, a.plane
	}
	var handlers [stages.NumStages]stages.Handler
	handlers[stages.StageAdmit] = a.admitter
	handlers[stages.StageVolumes] = &stages.VolumeStage{Node: a.node, Content: content, Events: recorder}
	handlers[stages.StageSandbox] = sandboxes
	handlers[stages.StageContainers] = containers
	status := &stages.StatusStage{
		Store: a.statuses, Cache: a.cache, Node: a.node, RuntimeName: ver.GetRuntimeName(),
		OnFinished: a.admitter.Release, Probes: probes{a.prober}, Log: log,
	}
	handlers[stages.StageStatus] = status
	// A pod is in /pods and its status in the API from its admission on,
	// Pending, not only once its first pass has started its containers.
	a.admitter.OnAdmitted = status.PublishPending
	queue, err := stages.ParseQueueKind(o.queue)
	if err != nil {
		return nil, fmt.Errorf("--queue: %w", err)
	}
	starts, err := o.startGate()
	if err != nil {
		return nil, err
	}
	a.pipeline, err = stages.New(stages.Config{
		Window: o.pipelineWindow, Workers: o.stageWorkers, Handlers: handlers, Queue: queue, Starts: starts,
		Cache: a.cache, Log: log,
		OnTornDown: func(uid types.UID, removed bool) {
			a.admitter.Release(uid)
			a.cluster.onTornDown(uid, removed)
		},
	})
	if err != nil {
		return nil, err
	}
	if err := a.buildSources(); err != nil {
		return nil, err
	}
	if a.cluster != nil {
		if err := a.wireCluster(ver.GetRuntimeName(), ver.GetRuntimeVersion()); err != nil {
			return nil, err
		}
	}
	reader, err := cgroupfs.NewReader()
	if err != nil {
		return nil, fmt.Errorf("cgroup stats: %w", err)
	}
	a.stats = &stats.Collector{
		NodeName: a.node.Name, Pods: a.statuses.All, Cache: a.cache, Layout: a.node.Cgroups,
		Reader: reader, Rates: &cgroupfs.RateTracker{}, CgroupMount: cgroupfs.UnifiedMount(), RootDir: o.rootDir,
		ImageFs: func(ctx context.Context) (string, uint64, error) {
			info, err := rt.ImageFsInfo(ctx)
			if err != nil || len(info.GetImageFilesystems()) == 0 {
				return "", 0, err
			}
			fs := info.GetImageFilesystems()[0]
			return fs.GetFsId().GetMountpoint(), fs.GetUsedBytes().GetValue(), nil
		},
	}
	return a, nil
}

// buildNode gathers what the stages know of the node.
func (a *agent) buildNode() error {
	o := a.o
	info, err := machine.Read()
	if err != nil {
		return err
	}
	a.machine = info
	// The node name is lowercased either way, as the kubelet does: it ends
	// up in pod names, which must be DNS names.
	name := strings.ToLower(strings.TrimSpace(o.hostnameOverride))
	if name == "" {
		if name, err = machine.Hostname(); err != nil {
			return fmt.Errorf("node name: %w", err)
		}
	}
	ips := machine.NodeIPs()
	if o.nodeIP != "" {
		ips = []string{o.nodeIP}
	}
	hostDNS, err := podspec.ReadResolvConf(o.resolvConf)
	if err != nil {
		return err
	}
	for _, dir := range []string{o.rootDir, o.podLogsDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return fmt.Errorf("create %s: %w", dir, err)
		}
	}
	// Container logs are read through no symbolic link, since pods with
	// a hostPath there can plant them; a --pod-logs-dir that is a link
	// (the operator's choice) is resolved once, here.
	logsDir, err := filepath.EvalSymlinks(o.podLogsDir)
	if err != nil {
		return fmt.Errorf("--pod-logs-dir: %w", err)
	}
	capacity, allocatable, err := nodeResources(o, info)
	if err != nil {
		return err
	}
	cpu, mem := allocatable[v1.ResourceCPU], allocatable[v1.ResourceMemory]
	a.log.Info("node resources", "capacity", describeResources(capacity), "allocatable", describeResources(allocatable))
	node.Publish(capacity, allocatable)
	a.node = &stages.Node{
		Name:        name,
		IPs:         ips,
		CPUMilli:    cpu.MilliValue(),
		MemoryBytes: mem.Value(),
		MaxPods:     o.maxPods,
		Capacity:    capacity,
		Allocatable: allocatable,
		RootDir:     o.rootDir,
		LogsDir:     logsDir,
		Cgroups:     cgroupfs.Layout{Root: o.cgroupRoot, PerQOS: o.cgroupsPerQOS},
		DNS:         podspec.DNS{ClusterDNS: o.clusterDNS, ClusterDomain: o.clusterDomain, Host: hostDNS},
		Security: podspec.Security{SeccompDefault: o.seccompDefault, AppArmor: machine.AppArmorEnabled(),
			ExtraMaskedPaths: machine.ThermalThrottlePaths()},
	}
	return nil
}

func (a *agent) buildSources() error {
	o := a.o
	var names []string
	if o.podManifestPath != "" {
		names = append(names, sources.FileSource)
	}
	if o.manifestURL != "" {
		names = append(names, sources.HTTPSource)
	}
	if a.cluster != nil {
		names = append(names, sources.APISource)
	}
	a.merger = sources.NewMerger(a.log, names...)
	if o.podManifestPath != "" {
		a.files = sources.NewFileSource(o.podManifestPath, a.node.Name, o.fileCheckFrequency, a.merger, a.log)
	}
	if o.manifestURL != "" {
		header, err := sources.ParseHeaders(o.manifestURLHeader)
		if err != nil {
			return fmt.Errorf("--manifest-url-header: %w", err)
		}
		a.url = sources.NewURLSource(o.manifestURL, header, a.node.Name, o.httpCheckFrequency, a.merger, a.log)
	}
	return nil
}

// run starts everything in dependency order and blocks until ctx ends:
// the HTTP servers first (a busy port stops podline before it touches a
// pod), then the pipeline (so events have somewhere to go), one relist to
// learn what already runs, and the sources, which may only remove runtime
// leftovers once each has delivered. Whatever way run returns, everything it
// started has stopped.
func (a *agent) run(parent context.Context) error {
	o := a.o
	ctx, cancel := context.WithCancel(parent)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		a.merger.Close() // releases a source blocked on the dispatcher
		wg.Wait()
		a.runtime.Close()
		if a.cluster != nil {
			a.cluster.events.Shutdown()
		}
	}()
	goRun := func(fn func(context.Context)) {
		wg.Add(1)
		go func() { defer wg.Done(); fn(ctx) }()
	}

	healthz := server.Healthz(
		server.Check{Name: "ping", Check: func() error { return nil }},
		server.Check{Name: "pleg", Check: a.relister.Healthy},
	)
	if o.healthzPort > 0 {
		addr := net.JoinHostPort(o.healthzBindAddress, strconv.Itoa(o.healthzPort))
		if err := server.Serve(ctx, addr, healthz, nil, a.log); err != nil {
			return err
		}
	}
	if o.readOnlyPort > 0 {
		ro := &server.ReadOnly{Pods: a.statuses.Pods, PodsJSON: a.statuses.PodsJSON, Machine: func() *machine.Info { return a.machine },
			Stats: a.stats.Collect, Healthz: healthz, Probes: prober.Metrics}
		addr := net.JoinHostPort(o.address, strconv.Itoa(o.readOnlyPort))
		if err := server.Serve(ctx, addr, ro.Handler(), nil, a.log); err != nil {
			return err
		}
	}
	if o.port > 0 {
		if err := a.serveSecure(ctx, healthz); err != nil {
			return err
		}
	}

	goRun(a.pipeline.Run)
	goRun(a.volumes.Run)
	goRun(a.prober.Run)
	if err := a.relister.Relist(ctx); err != nil {
		return fmt.Errorf("initial relist: %w", err)
	}
	a.log.Info("runtime state loaded", "pods", a.cache.Len())
	if a.plane != nil {
		a.log.Info("event plane watching what runs", "cgroups", a.plane.Adopt(a.podCgroupCandidates))
	}
	for _, fn := range a.lifecycle {
		goRun(fn)
	}
	goRun(a.dispatch)
	if a.files != nil {
		goRun(a.files.Run)
	}
	if a.url != nil {
		goRun(a.url.Run)
	}
	if a.cluster != nil {
		a.cluster.run(goRun)
	}
	if len(a.sourceNames()) == 0 {
		a.pipeline.SourcesReady()
	}
	a.log.Info("podline running", "node", a.node.Name, "manifests", o.podManifestPath, "queue", o.queue)
	<-ctx.Done()
	return nil
}

func (a *agent) sourceNames() []string {
	var n []string
	if a.files != nil {
		n = append(n, sources.FileSource)
	}
	if a.url != nil {
		n = append(n, sources.HTTPSource)
	}
	if a.cluster != nil {
		n = append(n, sources.APISource)
	}
	return n
}

// dispatch feeds the merged source stream into the pipeline.
func (a *agent) dispatch(ctx context.Context) {
	ready := false
	for u := range a.merger.Updates() {
		if a.cluster != nil {
			a.cluster.mirrors.Apply(u)
		}
		// A status-only change of an API pod is, almost always, the
		// status podline itself just sent: nothing to do.
		if u.Op == sources.RECONCILE && u.Source == sources.APISource {
			continue
		}
		if u.Op == sources.ADD {
			// Decided here, oldest first, so that after a restart the pods
			// that were running keep their place whichever admit worker
			// takes their passes; the passes start in that order too.
			a.admitter.Arrived(u.Pods)
		}
		for _, pod := range u.Pods {
			switch u.Op {
			case sources.REMOVE:
				a.pipeline.Remove(pod.UID)
			default:
				// /pods shows a graceful deletion or an edit at once,
				// not when the pass it starts ends.
				a.statuses.Refresh(pod)
				a.pipeline.Upsert(pod)
			}
		}
		if !ready && a.merger.SeenAll() {
			ready = true
			a.pipeline.SourcesReady()
			if a.cluster != nil {
				a.cluster.mirrors.SourcesReady()
			}
		}
	}
}
