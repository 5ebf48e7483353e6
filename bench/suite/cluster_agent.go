package main

import (
	"context"
	"path/filepath"
	"strings"

	kubeletproc "github.com/podline/podline/bench/internal/kubelet"
	"github.com/podline/podline/bench/internal/observe"
)

// startClusterAgent starts podline or the kubelet as node node of the
// control plane that kubeconfig (the node's own identity) reaches,
// labelled so that a nodeSelector finds it, with room for maxPods.
func (s *suite) startClusterAgent(ctx context.Context, which, dir, endpoint, node, kubeconfig string, maxPods int) (agent, error) {
	if which == kubelet {
		p, err := kubeletproc.Start(ctx, kubeletproc.Config{
			Bin:         s.kubelet,
			CRIEndpoint: strings.TrimPrefix(endpoint, "unix://"),
			Dir:         filepath.Join(dir, "kubelet"),
			CgroupRoot:  "/podline-bench-kubelet-" + filepath.Base(dir),
			NodeName:    node,
			MaxPods:     maxPods,
			Kubeconfig:  kubeconfig,
			NodeLabels:  map[string]string{clusterNodeLabel: node},
		})
		if err != nil {
			return nil, err
		}
		return &kubeletAgent{p: p, c: observe.New(p.URL())}, nil
	}
	return startPodlineNode(ctx, s.podline, dir, endpoint, node, maxPods,
		"--kubeconfig", kubeconfig,
		"--node-labels", clusterNodeLabel+"="+node)
}
