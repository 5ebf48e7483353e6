package main

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
	"github.com/podline/podline/server"
	"github.com/podline/podline/stages"
)

// locator finds what the authenticated port's requests name: pods by name
// in the status store, their containers and sandboxes in the runtime
// cache, and log files where the sandbox config put them.
type locator struct {
	statuses *stages.StatusStore
	cache    *pleg.Cache
	node     *podspec.Node
}

func (l *locator) pod(namespace, name string, uid types.UID) (*v1.Pod, *pleg.Pod, error) {
	p, _, ok := l.statuses.Find(namespace, name, uid)
	if !ok {
		return nil, nil, fmt.Errorf("%w: pod %q does not exist", server.ErrNotFound, namespace+"/"+name)
	}
	return p, l.cache.Get(p.UID), nil
}

// inSpec reports whether the pod declares the container (init, sidecar,
// app or ephemeral).
func inSpec(p *v1.Pod, name string) bool {
	for _, c := range p.Spec.InitContainers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range p.Spec.Containers {
		if c.Name == name {
			return true
		}
	}
	for _, c := range p.Spec.EphemeralContainers {
		if c.Name == name {
			return true
		}
	}
	return false
}

func (l *locator) Container(namespace, pod, uid, container string) (string, error) {
	p, rt, err := l.pod(namespace, pod, types.UID(uid))
	if err != nil {
		return "", err
	}
	if !inSpec(p, container) {
		return "", fmt.Errorf("%w: container %s is not valid for pod %s", server.ErrNotFound, container, pod)
	}
	c := rt.Latest(container)
	if c == nil || c.State != pleg.ContainerRunning {
		return "", fmt.Errorf("%w: container %q of pod %q is not running", server.ErrNotFound, container, pod)
	}
	return c.ID, nil
}

func (l *locator) Sandbox(namespace, pod, uid string) (string, error) {
	_, rt, err := l.pod(namespace, pod, types.UID(uid))
	if err != nil {
		return "", err
	}
	sb := rt.CurrentSandbox()
	if sb == nil || sb.State != pleg.SandboxReady {
		return "", fmt.Errorf("%w: pod %q has no running sandbox", server.ErrNotFound, pod)
	}
	return sb.ID, nil
}

func (l *locator) LogFile(namespace, pod, container string, previous bool) (string, func() bool, error) {
	p, rt, err := l.pod(namespace, pod, "")
	if err != nil {
		return "", nil, err
	}
	if !inSpec(p, container) {
		return "", nil, fmt.Errorf("%w: container %s is not valid for pod %s", server.ErrNotFound, container, pod)
	}
	c := rt.Latest(container)
	if previous {
		c = rt.Previous(c)
		if c == nil {
			return "", nil, fmt.Errorf("%w: previous terminated container %q in pod %q not found", server.ErrBadRequest, container, pod)
		}
	}
	if c == nil {
		return "", nil, fmt.Errorf("%w: container %q in pod %q is waiting to start", server.ErrBadRequest, container, pod)
	}
	id, uid := c.ID, p.UID
	running := func() bool {
		cur := l.cache.Get(uid).Container(id)
		return cur != nil && cur.State != pleg.ContainerExited
	}
	return podspec.ContainerLogFile(l.node, p, container, c.Attempt), running, nil
}

// RunningPods lists the pods with a running container as the runtime has
// them: names, UIDs and their running containers, as the kubelet's
// /runningpods/ does.
func (l *locator) RunningPods() []v1.Pod {
	var out []v1.Pod
	for _, uid := range l.cache.UIDs() {
		rp := l.cache.Get(uid)
		if !rp.Running() {
			continue
		}
		pod := v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: rp.Name, Namespace: rp.Namespace, UID: rp.UID}}
		for _, c := range rp.Containers {
			if c.State == pleg.ContainerRunning {
				pod.Spec.Containers = append(pod.Spec.Containers, v1.Container{Name: c.Name, Image: c.Image})
			}
		}
		out = append(out, pod)
	}
	return out
}
