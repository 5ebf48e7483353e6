package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/podline/podline/bench/internal/cgtree"
	"github.com/podline/podline/cri"
)

// bench holds what every scenario shares: the runtime client, the podline
// binary, and the UIDs of every pod the bench has seen (so cleanup can
// tell its pods from other users' of the same containerd).
type bench struct {
	cfg           *config
	rt            *cri.Client
	bin           string
	rev           string
	tmp           string
	containerdPID int

	mu   sync.Mutex
	uids map[string]bool
}

func newBench(ctx context.Context, c *config) (*bench, error) {
	b := &bench{cfg: c, uids: map[string]bool{}}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var err error
	if b.rt, err = cri.Dial(dctx, c.endpoint, "", 30*time.Second); err != nil {
		return nil, fmt.Errorf("no runtime (start it with scripts/runtime.sh up): %w", err)
	}
	raw, err := os.ReadFile(c.containerdP)
	if err != nil {
		b.rt.Close()
		return nil, fmt.Errorf("containerd pid: %w", err)
	}
	if b.containerdPID, err = strconv.Atoi(strings.TrimSpace(string(raw))); err != nil {
		b.rt.Close()
		return nil, fmt.Errorf("containerd pid file %s: %w", c.containerdP, err)
	}
	if b.tmp, err = os.MkdirTemp("", "podline-eventplane-"); err != nil {
		b.rt.Close()
		return nil, err
	}
	b.bin = c.podline
	if b.bin == "" {
		b.bin = filepath.Join(b.tmp, "podline")
		progress("building podline from %s", c.repo)
		build := exec.CommandContext(ctx, "go", "build", "-o", b.bin, "./cmd/podline")
		build.Dir, build.Stdout, build.Stderr = c.repo, os.Stdout, os.Stderr
		if err := build.Run(); err != nil {
			b.close(false)
			return nil, fmt.Errorf("build podline: %w", err)
		}
		if out, err := exec.Command("git", "-C", c.repo, "describe", "--always", "--dirty").Output(); err == nil {
			b.rev = strings.TrimSpace(string(out))
		}
	}
	return b, nil
}

// close removes the bench's cgroup tree and its temporary directory;
// after a failure the directory (podline's logs) stays for a look.
func (b *bench) close(failed bool) {
	b.removeCgroups()
	b.rt.Close()
	if failed {
		os.Remove(filepath.Join(b.tmp, "podline"))
		if entries, _ := os.ReadDir(b.tmp); len(entries) > 0 {
			progress("podline logs kept in %s", b.tmp)
			return
		}
	}
	os.RemoveAll(b.tmp)
}

func (b *bench) saw(uid string) {
	b.mu.Lock()
	b.uids[uid] = true
	b.mu.Unlock()
}

// ours is true for a sandbox of a pod the bench created: a UID it saw in
// /pods, or one of its pod names on its node name.
func (b *bench) ours(labels map[string]string) bool {
	b.mu.Lock()
	seen := b.uids[cri.PodUIDOf(labels)]
	b.mu.Unlock()
	name := labels[cri.LabelPodName]
	return seen || (strings.HasPrefix(name, namePrefix) && strings.HasSuffix(name, "-"+nodeName))
}

// ourSandboxes lists the runtime's sandboxes of the bench's pods.
func (b *bench) ourSandboxes(ctx context.Context) ([]string, error) {
	sbs, err := b.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var ids []string
	for _, sb := range sbs {
		if b.ours(sb.Labels) {
			ids = append(ids, sb.Id)
		}
	}
	return ids, nil
}

// foreignSandboxes counts the sandboxes of other users of the runtime:
// their containers add to containerd's idle cost.
func (b *bench) foreignSandboxes(ctx context.Context) int {
	sbs, err := b.rt.ListPodSandbox(ctx, nil)
	if err != nil {
		return -1
	}
	n := 0
	for _, sb := range sbs {
		if !b.ours(sb.Labels) {
			n++
		}
	}
	return n
}

// removeLeftovers stops and removes the bench's sandboxes that podline
// did not: the last resort after a failed teardown.
func (b *bench) removeLeftovers(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	ids, err := b.ourSandboxes(ctx)
	if err != nil {
		progress("cleanup: %v", err)
		return
	}
	for _, id := range ids {
		progress("cleanup: removing sandbox %s left by podline", id)
		if err := b.rt.StopPodSandbox(ctx, id); err != nil {
			progress("cleanup: stop sandbox %s: %v", id, err)
		}
		if err := b.rt.RemovePodSandbox(ctx, id); err != nil {
			progress("cleanup: remove sandbox %s: %v", id, err)
		}
	}
}

// removeCgroups removes the bench's cgroup root from every hierarchy.
// Everything under it is podline's: the root is the bench's own. A cgroup
// that still holds processes stays and is reported.
func (b *bench) removeCgroups() {
	if err := cgtree.Remove(b.cfg.cgroupRoot); err != nil {
		progress("cleanup: cgroup left behind: %v", err)
	}
}
