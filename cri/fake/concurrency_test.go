package fake

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestListsDuringChurn reads lists, stats and statuses over gRPC while
// pods start, exit and go away. Lists share cached items and stats are
// built outside the lock, so under -race this shows that nothing a reader
// marshals is written meanwhile; the checks show every answer is whole.
func TestListsDuringChurn(t *testing.T) {
	r := newRig(t, Options{})
	ctx, cancel := context.WithTimeout(r.ctx, 300*time.Millisecond)
	defer cancel()
	// Writers change pods that readers have already listed: each starts a
	// batch, waits for a reader to have seen it, then ends it one
	// container, sandbox or pod at a time.
	var made, listed atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for round := 0; ctx.Err() == nil; round++ {
				var sbs, cs []string
				for i := range 20 {
					name := strconv.Itoa(w) + "-" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
					sb, err := r.srv.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig(name, podLabels(i))})
					if err != nil {
						t.Error(err)
						return
					}
					c, err := r.srv.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", podLabels(i))})
					if err != nil {
						t.Error(err)
						return
					}
					r.srv.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId})
					sbs, cs = append(sbs, sb.PodSandboxId), append(cs, c.ContainerId)
					made.Add(1)
				}
				for seen := listed.Load(); listed.Load() < seen+2 && ctx.Err() == nil; {
					time.Sleep(time.Millisecond)
				}
				for i := range sbs {
					switch i % 3 {
					case 0:
						r.srv.ExitContainer(cs[i], 1)
					case 1:
						r.srv.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sbs[i]})
					}
				}
				for _, sb := range sbs {
					r.srv.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb})
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				cs, err := r.rt.ListContainers(ctx, &runtimeapi.ListContainersRequest{})
				if err != nil {
					return // the deadline
				}
				for _, c := range cs.Containers {
					if c.Id == "" || c.Metadata.GetName() != "c" || c.State > runtimeapi.ContainerState_CONTAINER_EXITED {
						t.Errorf("torn container item: %v", c)
					}
				}
				st, err := r.rt.ListContainerStats(ctx, &runtimeapi.ListContainerStatsRequest{})
				if err != nil {
					return
				}
				for _, s := range st.Stats {
					if s.Attributes.GetId() == "" || s.Cpu == nil || s.Memory == nil {
						t.Errorf("torn stats: %v", s)
					}
				}
				if _, err := r.rt.ListPodSandboxStats(ctx, &runtimeapi.ListPodSandboxStatsRequest{}); err != nil {
					return
				}
				sbs, err := r.rt.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
				if err != nil {
					return
				}
				listed.Add(1)
				for _, sb := range sbs.Items {
					r.rt.PodSandboxStatus(ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: sb.Id})
				}
			}
		})
	}
	wg.Wait()
	if made.Load() == 0 {
		t.Fatal("no pods were made")
	}
}
