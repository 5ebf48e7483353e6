package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"

	"github.com/podline/podline/events"
	"github.com/podline/podline/kubeapi"
	"github.com/podline/podline/mirror"
	"github.com/podline/podline/node"
	"github.com/podline/podline/podstatus"
	"github.com/podline/podline/sources"
	"github.com/podline/podline/volumes"
)

// cluster is everything that talks to the API server. It is nil without
// --kubeconfig: podline then runs standalone, from static and URL pods.
type cluster struct {
	client          kubernetes.Interface // pods, volumes, statuses, mirror pods
	heartbeatClient kubernetes.Interface // node status and lease, unthrottled
	labels          map[string]string    // --node-labels
	events          *events.Recorder
	volumes         *volumes.Source
	services        *kubeapi.Services
	heartbeat       *node.Heartbeat
	api             *sources.APIWatcher
	mirrors         *mirror.Manager
	statuses        *podstatus.Manager
	// --rotate-certificates: the client certificate's manager, and the
	// clients whose connections a renewal closes. nil without it.
	clients    *kubeapi.Clients
	clientCert certificate.Manager
	log        *slog.Logger
}

// connectCluster makes the client and what the stages need of the API
// server (events, content volumes). Nothing is sent until run.
func (a *agent) connectCluster(ctx context.Context) error {
	o := a.o
	if o.kubeconfig == "" {
		return nil
	}
	labels, err := node.ParseLabels(strings.Join(o.nodeLabels, ","))
	if err != nil {
		return fmt.Errorf("--node-labels: %w", err)
	}
	cfg := kubeapi.Config{
		Kubeconfig: o.kubeconfig, QPS: float32(o.kubeAPIQPS), Burst: o.kubeAPIBurst,
		UserAgent: "podline/" + version + " (" + a.node.Name + ")",
	}
	var clients *kubeapi.Clients
	var clientCert certificate.Manager
	if o.serve.rotateCerts {
		// The manager asks for certificates through the clients that
		// present its own: made first, it reads them once they exist.
		if clientCert, err = a.clientCertManager(func() kubernetes.Interface { return clients.Pods }); err != nil {
			return err
		}
		cfg.ClientCert = clientCert.Current
	}
	if clients, err = kubeapi.NewClients(cfg, float32(o.eventQPS), o.eventBurst); err != nil {
		return err
	}
	client := clients.Pods
	a.cluster = &cluster{
		clients:         clients,
		clientCert:      clientCert,
		log:             a.log,
		client:          client,
		heartbeatClient: clients.Heartbeat,
		labels:          labels,
		events:          events.New(ctx, clients.Events, a.node.Name),
		volumes:         volumes.New(client, a.node.Allocatable),
		services:        kubeapi.NewServices(client),
	}
	return nil
}

// wireCluster connects the API server's parts to the pipeline: the API pod
// source and mirror pods feed the merger, the status manager follows the
// status store, and the event plane reports OOM kills.
func (a *agent) wireCluster(runtimeName, runtimeVersion string) error {
	c := a.cluster
	if err := a.buildHeartbeat(runtimeName, runtimeVersion); err != nil {
		return err
	}
	c.mirrors = mirror.New(mirror.Config{
		Client: c.client, NodeName: a.node.Name, NodeUID: c.heartbeat.NodeUID, Log: a.log,
	})
	c.api = sources.NewAPISource(sources.APIConfig{
		Client: c.client, NodeName: a.node.Name, Merger: a.merger, Mirrors: c.mirrors.SetMirrors, Log: a.log,
	})
	c.statuses = podstatus.New(podstatus.Config{
		Client: c.client, Store: a.statuses, MirrorOf: c.mirrors.MirrorOf, Watched: c.api.Pod,
		RequestTimeout: a.o.requestTimeout, Log: a.log,
	})
	a.statuses.OnChange(c.statuses.Notify)
	return nil
}

// run starts the loops that talk to the API server.
func (c *cluster) run(goRun func(func(context.Context))) {
	if c.clientCert != nil {
		goRun(c.rotateClientCert)
	}
	goRun(c.heartbeat.Run)
	goRun(c.services.Run)
	goRun(c.mirrors.Run)
	goRun(c.statuses.Run)
	goRun(c.api.Run)
}

// onTornDown: a pod the API server is deleting has stopped, so its object
// can go once its final status landed.
func (c *cluster) onTornDown(uid types.UID, removed bool) {
	if c != nil && !removed {
		c.statuses.Terminated(uid)
	}
}

// onContainerOOM reports an OOM kill in a container on its pod;
// onSystemOOM one outside any pod on the node, as the kubelet's OOM watcher
// does.
func (a *agent) onContainerOOM(uid types.UID, containerID string, pid uint32, _ time.Time) {
	if a.cluster == nil {
		return
	}
	pod, _, _, ok := a.statuses.Get(uid)
	if !ok {
		return
	}
	name := ""
	if rt := a.cache.Get(uid); rt != nil {
		if c := rt.Container(containerID); c != nil {
			name = c.Name
		}
	}
	a.cluster.events.PodEvent(pod, name, v1.EventTypeWarning, "OOMKilling",
		fmt.Sprintf("Memory cgroup out of memory: Killed process %d in container %s", pid, name))
}

func (a *agent) onSystemOOM(pid uint32, _ time.Time) {
	if a.cluster == nil {
		return
	}
	a.cluster.events.NodeEvent(v1.EventTypeWarning, "SystemOOM",
		fmt.Sprintf("System OOM encountered, victim process: %d", pid))
}
