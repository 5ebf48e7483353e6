package main

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/machine"
	"github.com/podline/podline/node"
)

// nodeResources reads the machine and applies the reservation flags (they
// were validated with the other flags).
func nodeResources(o *options, info *machine.Info) (capacity, allocatable v1.ResourceList, err error) {
	fs, err := machine.FsStats(o.rootDir)
	if err != nil {
		return nil, nil, fmt.Errorf("size of the filesystem of --root-dir: %w", err)
	}
	kube, _ := node.ParseResourceList(o.kubeReserved)
	system, _ := node.ParseResourceList(o.systemReserved)
	hard, _ := node.ParseThresholds(o.evictionHard)
	capacity = node.Capacity(info.NumCores, int64(info.MemoryCapacity), int64(fs.Capacity), o.maxPods)
	return capacity, node.Allocatable(capacity, kube, system, hard), nil
}

func describeResources(rl v1.ResourceList) string {
	var parts []string
	for name, q := range rl {
		parts = append(parts, string(name)+"="+q.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
