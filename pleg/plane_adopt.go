package pleg

import (
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"
)

// Adopt registers what already runs, after podline restarted: every
// ready sandbox and running container in the cache. parents lists where a
// pod's cgroup may be (one place per QoS class: the pod spec that decides
// is not known yet); the first that holds the container's cgroup wins.
func (p *Plane) Adopt(parents func(uid types.UID) []string) int {
	if p.cfg.Kernel == nil && p.cgroupWatcher() == nil {
		return 0
	}
	n := 0
	for _, uid := range p.cfg.Cache.UIDs() {
		pod := p.cfg.Cache.Get(uid)
		if pod == nil {
			continue
		}
		candidates := parents(uid)
		find := func(id string) string {
			for _, parent := range candidates {
				if _, err := os.Stat(filepath.Join(p.cfg.CgroupMount, p.cfg.Layout.ContainerCgroup(parent, id))); err == nil {
					return parent
				}
			}
			return ""
		}
		for _, sb := range pod.Sandboxes {
			if sb.State == SandboxReady {
				if parent := find(sb.ID); parent != "" {
					p.SandboxStarted(uid, sb.ID, parent)
					n++
				}
			}
		}
		for _, c := range pod.Containers {
			if c.State == ContainerRunning {
				if parent := find(c.ID); parent != "" {
					p.ContainerStarted(uid, c.SandboxID, c.ID, parent)
					n++
				}
			}
		}
	}
	return n
}
