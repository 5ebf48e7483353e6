package pleg

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/internal/monotime"
)

// emptyRuntime lists nothing.
type emptyRuntime struct{}

func (emptyRuntime) ListPodSandbox(context.Context, *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	return nil, nil
}
func (emptyRuntime) ListContainers(context.Context, *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	return nil, nil
}
func (emptyRuntime) PodSandboxStatus(context.Context, string) (*runtimeapi.PodSandboxStatus, error) {
	return nil, nil
}
func (emptyRuntime) ContainerStatus(context.Context, string) (*runtimeapi.ContainerStatus, error) {
	return nil, nil
}

// Health counts the time since the last good relist on the monotonic
// clock, so setting the wall clock neither hides a dead runtime (set back)
// nor reports a live one dead (set forward).
func TestRelistHealthOnTheMonotonicClock(t *testing.T) {
	r := NewRelister(emptyRuntime{}, NewCache(), time.Second, func(types.UID) {}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if r.Healthy() == nil {
		t.Fatal("healthy before any relist")
	}
	if err := r.Relist(context.Background()); err != nil {
		t.Fatal(err)
	}
	if last := r.lastOK.Load(); last == nil || !monotime.Has(*last) {
		t.Fatalf("the last good relist was kept without a monotonic reading: %v", last)
	}
	if err := r.Healthy(); err != nil {
		t.Fatalf("unhealthy right after a good relist: %v", err)
	}
	stale := time.Now().Add(-unhealthyAfter - time.Second)
	r.lastOK.Store(&stale)
	if r.Healthy() == nil {
		t.Fatal("healthy with no good relist for longer than unhealthyAfter")
	}
}
