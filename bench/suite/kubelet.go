package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	kubeletproc "github.com/podline/podline/bench/internal/kubelet"
	"github.com/podline/podline/bench/internal/observe"
	"github.com/podline/podline/bench/internal/result"
)

// kubeletAgent is the upstream kubelet in standalone mode, seen through
// the same interface as podline.
type kubeletAgent struct {
	p *kubeletproc.Process
	c *observe.Client
}

func startKubelet(ctx context.Context, bin, dir, endpoint string, k result.Key) (*kubeletAgent, error) {
	p, err := kubeletproc.Start(ctx, kubeletproc.Config{
		Bin:         bin,
		CRIEndpoint: strings.TrimPrefix(endpoint, "unix://"),
		Dir:         filepath.Join(dir, "kubelet"),
		CgroupRoot:  "/podline-bench-kubelet-" + filepath.Base(dir),
		NodeName:    nodeName,
		MaxPods:     k.Pods + k.Pods/10 + 10,
	})
	if err != nil {
		return nil, err
	}
	return &kubeletAgent{p: p, c: observe.New(p.URL())}, nil
}

func (a *kubeletAgent) pid() int                { return a.p.Pid() }
func (a *kubeletAgent) client() *observe.Client { return a.c }
func (a *kubeletAgent) manifests() string       { return a.p.ManifestDir() }
func (a *kubeletAgent) stop()                   { a.p.Stop(); a.c.Close() }
func (a *kubeletAgent) cleanup() error          { return a.p.Cleanup() }

func (a *kubeletAgent) exited() bool {
	select {
	case <-a.p.Exited():
		return true
	default:
		return false
	}
}

func (a *kubeletAgent) errExited() error {
	return fmt.Errorf("kubelet exited; log %s ends:\n%s", a.p.LogPath(), observe.LogTail(a.p.LogPath(), 15))
}

func kubeletVersion(bin string) string {
	v, err := kubeletproc.Version(bin)
	if err != nil {
		return "unknown: " + err.Error()
	}
	return v
}
