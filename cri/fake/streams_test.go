package fake

import (
	"context"
	"errors"
	"io"
	"strconv"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// TestStreamedLists checks that a streamed list is its unary form cut in
// chunks: every item once, filters honoured.
func TestStreamedLists(t *testing.T) {
	const n = 2*streamChunk + 7
	r := newRig(t, Options{})
	ctx := context.Background()
	for i := range n {
		labels := map[string]string{"i": strconv.Itoa(i % 2)}
		sb, err := r.srv.RunPodSandbox(ctx, &runtimeapi.RunPodSandboxRequest{Config: sandboxConfig("p"+strconv.Itoa(i), labels)})
		if err != nil {
			t.Fatal(err)
		}
		c, err := r.srv.CreateContainer(ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb.PodSandboxId, Config: containerConfig("c", labels)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.srv.StartContainer(ctx, &runtimeapi.StartContainerRequest{ContainerId: c.ContainerId}); err != nil {
			t.Fatal(err)
		}
	}

	// recvAll counts messages and items until the server ends the stream.
	recvAll := func(name string, recv func() (int, error)) (msgs, items int) {
		t.Helper()
		for {
			k, err := recv()
			if errors.Is(err, io.EOF) {
				return msgs, items
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			msgs++
			items += k
		}
	}
	f := func(name string, wantMsgs, wantItems int, recv func() (int, error)) {
		t.Helper()
		if msgs, items := recvAll(name, recv); msgs != wantMsgs || items != wantItems {
			t.Fatalf("%s: %d messages with %d items, want %d with %d", name, msgs, items, wantMsgs, wantItems)
		}
	}

	sbs, err := r.rt.StreamPodSandboxes(r.ctx, &runtimeapi.StreamPodSandboxesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	f("sandboxes", 3, n, func() (int, error) {
		m, err := sbs.Recv()
		for _, it := range m.GetPodSandboxes() {
			if seen[it.Id] {
				t.Fatalf("sandbox %s sent twice", it.Id)
			}
			seen[it.Id] = true
		}
		return len(m.GetPodSandboxes()), err
	})

	odd := map[string]string{"i": "1"}
	cs, err := r.rt.StreamContainers(r.ctx, &runtimeapi.StreamContainersRequest{Filter: &runtimeapi.ContainerFilter{LabelSelector: odd}})
	if err != nil {
		t.Fatal(err)
	}
	f("odd containers", 2, n/2, func() (int, error) { m, err := cs.Recv(); return len(m.GetContainers()), err })

	st, err := r.rt.StreamContainerStats(r.ctx, &runtimeapi.StreamContainerStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	f("container stats", 3, n, func() (int, error) { m, err := st.Recv(); return len(m.GetContainerStats()), err })

	ps, err := r.rt.StreamPodSandboxStats(r.ctx, &runtimeapi.StreamPodSandboxStatsRequest{Filter: &runtimeapi.PodSandboxStatsFilter{LabelSelector: odd}})
	if err != nil {
		t.Fatal(err)
	}
	f("odd sandbox stats", 2, n/2, func() (int, error) { m, err := ps.Recv(); return len(m.GetPodSandboxStats()), err })

	im, err := r.img.StreamImages(r.ctx, &runtimeapi.StreamImagesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	f("images (none)", 0, 0, func() (int, error) { m, err := im.Recv(); return len(m.GetImages()), err })
}
