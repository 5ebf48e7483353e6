package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/podline/podline/machine"
	"github.com/podline/podline/node"
)

// pressureTransitionPeriod is the kubelet's
// --eviction-pressure-transition-period default: a pressure condition
// stays on this long after its signal recovered, so it does not flap.
const pressureTransitionPeriod = 5 * time.Minute

// buildHeartbeat wires node registration, status and lease.
func (a *agent) buildHeartbeat(runtimeName, runtimeVersion string) error {
	o, c := a.o, a.cluster
	taints, err := node.ParseTaints(strings.Join(o.registerWithTaints, ","))
	if err != nil {
		return fmt.Errorf("--register-with-taints: %w", err)
	}
	hard, _ := node.ParseThresholds(o.evictionHard)
	hold := &node.PressureHold{Period: pressureTransitionPeriod}
	c.heartbeat, err = node.NewHeartbeat(node.Config{
		Client: c.heartbeatClient, Name: a.node.Name,
		Labels: c.labels, Taints: taints, Register: o.registerNode,
		Capacity: a.node.Capacity, Allocatable: a.node.Allocatable,
		Addresses:       node.Addresses(a.node.IPs, a.node.Name),
		Info:            node.SystemInfo(a.machine, runtimeName, runtimeVersion, version),
		KubeletPort:     int32(o.port),
		UpdateFrequency: o.nodeStatusUpdateFrequency, ReportFrequency: o.nodeStatusReportFrequency,
		LeaseDuration: time.Duration(o.nodeLeaseDurationSeconds) * time.Second,
		Ready:         a.nodeReady,
		Pressure: func() node.Pressures {
			return hold.Observe(time.Now(), node.Pressure(hard, a.observe()))
		},
		Record: c.events.NodeEvent,
		Log:    a.log,
	})
	return err
}

// nodeReady is the Ready condition: the runtime and its network answer
// ready, and the runtime state is being kept current.
func (a *agent) nodeReady() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := a.runtime.Status(ctx, false)
	if err != nil {
		return fmt.Errorf("container runtime status check failed: %w", err)
	}
	for _, cond := range st.GetStatus().GetConditions() {
		if cond.GetStatus() {
			continue
		}
		switch cond.GetType() {
		case "RuntimeReady":
			return fmt.Errorf("container runtime is down: %s %s", cond.GetReason(), cond.GetMessage())
		case "NetworkReady":
			return fmt.Errorf("container runtime network not ready: NetworkReady=false reason:%s message:%s", cond.GetReason(), cond.GetMessage())
		}
	}
	if err := a.relister.Healthy(); err != nil {
		return fmt.Errorf("PLEG is not healthy: %w", err)
	}
	return nil
}

// observe measures the eviction signals; one that cannot be read is left
// out, which puts the node under no pressure for it.
func (a *agent) observe() node.Observations {
	mem, memErr := machine.ReadMemory("/proc/meminfo")
	fs, fsErr := machine.FsStats(a.o.rootDir)
	obs := node.MachineObservations(mem, fs)
	if memErr != nil {
		delete(obs, "memory.available")
	}
	if fsErr != nil {
		delete(obs, "nodefs.available")
		delete(obs, "nodefs.inodesFree")
	}
	return obs
}
