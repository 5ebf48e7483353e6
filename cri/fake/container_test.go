package fake

import (
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestContainerStateMachine(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))

	_, err := r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: "missing", Config: containerConfig("c", nil)})
	wantCode(t, err, codes.NotFound)

	id := r.createContainer(t, sb, containerConfig("app", map[string]string{"k": "v"}))
	st := r.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_CREATED || st.CreatedAt == 0 || st.StartedAt != 0 {
		t.Fatalf("after create: %v", st)
	}
	if st.Metadata.Name != "app" || st.Metadata.Attempt != 2 || st.Labels["k"] != "v" {
		t.Fatalf("metadata/labels not kept: %v %v", st.Metadata, st.Labels)
	}
	if st.LogPath != "/var/log/pods/pod/app/0.log" || st.Image.GetImage() != "busybox:1" || st.ImageRef == "" {
		t.Fatalf("log path %q image %v ref %q", st.LogPath, st.Image, st.ImageRef)
	}
	_, err = r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("app", nil)})
	wantCode(t, err, codes.AlreadyExists)

	r.startContainer(t, id)
	st = r.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_RUNNING || st.StartedAt < st.CreatedAt {
		t.Fatalf("after start: %v", st)
	}
	_, err = r.rt.StartContainer(r.ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	wantCode(t, err, codes.FailedPrecondition)

	for range 2 { // stop is idempotent
		if _, err := r.rt.StopContainer(r.ctx, &runtimeapi.StopContainerRequest{ContainerId: id, Timeout: 30}); err != nil {
			t.Fatalf("StopContainer: %v", err)
		}
	}
	st = r.containerStatus(t, id)
	if st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 143 || st.Reason != "Error" || st.FinishedAt < st.StartedAt {
		t.Fatalf("after stop: %v", st)
	}
	_, err = r.rt.StartContainer(r.ctx, &runtimeapi.StartContainerRequest{ContainerId: id})
	wantCode(t, err, codes.FailedPrecondition)

	for range 2 { // remove is idempotent
		if _, err := r.rt.RemoveContainer(r.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
			t.Fatalf("RemoveContainer: %v", err)
		}
	}
	_, err = r.rt.ContainerStatus(r.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	wantCode(t, err, codes.NotFound)
	_, err = r.rt.StopContainer(r.ctx, &runtimeapi.StopContainerRequest{ContainerId: id})
	wantCode(t, err, codes.NotFound)
}

func TestStopSandboxStopsContainersAndRemoveRemovesThem(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	running := r.createContainer(t, sb, containerConfig("run", nil, "FAKE_STOP_EXIT_CODE", "0"))
	r.startContainer(t, running)
	created := r.createContainer(t, sb, containerConfig("idle", nil))

	if _, err := r.rt.StopPodSandbox(r.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	if st := r.containerStatus(t, running); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 0 || st.Reason != "Completed" {
		t.Fatalf("running container after sandbox stop: %v", st)
	}
	// Like containerd, a never-started container stays created.
	if st := r.containerStatus(t, created); st.State != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Fatalf("created container after sandbox stop: %v", st.State)
	}
	_, err := r.rt.StartContainer(r.ctx, &runtimeapi.StartContainerRequest{ContainerId: created})
	wantCode(t, err, codes.FailedPrecondition)
	_, err = r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{PodSandboxId: sb, Config: containerConfig("late", nil)})
	wantCode(t, err, codes.FailedPrecondition)

	if _, err := r.rt.RemovePodSandbox(r.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb}); err != nil {
		t.Fatal(err)
	}
	list, err := r.rt.ListContainers(r.ctx, &runtimeapi.ListContainersRequest{})
	if err != nil || len(list.Containers) != 0 {
		t.Fatalf("containers left after RemovePodSandbox: %v %v", list, err)
	}
}

func TestRemoveRunningContainer(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))
	id := r.createContainer(t, sb, containerConfig("app", nil))
	r.startContainer(t, id)
	if _, err := r.rt.RemoveContainer(r.ctx, &runtimeapi.RemoveContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	_, err := r.rt.ContainerStatus(r.ctx, &runtimeapi.ContainerStatusRequest{ContainerId: id})
	wantCode(t, err, codes.NotFound)
	// The name is free again.
	r.createContainer(t, sb, containerConfig("app", nil))
}

func TestContainerExits(t *testing.T) {
	r := newRig(t, Options{})
	sb := r.runSandbox(t, sandboxConfig("pod", nil))

	f := func(name string, env []string, wantCode int32, wantReason string) {
		t.Helper()
		id := r.createContainer(t, sb, containerConfig(name, nil, env...))
		r.startContainer(t, id)
		st := r.waitState(t, id, runtimeapi.ContainerState_CONTAINER_EXITED)
		if st.ExitCode != wantCode || st.Reason != wantReason || st.FinishedAt < st.StartedAt {
			t.Fatalf("%s: exit %d reason %q finished %d started %d; want %d %q",
				name, st.ExitCode, st.Reason, st.FinishedAt, st.StartedAt, wantCode, wantReason)
		}
	}
	f("ok", []string{"FAKE_EXIT_AFTER", "20ms"}, 0, "Completed")
	f("fail", []string{"FAKE_EXIT_AFTER", "10ms", "FAKE_EXIT_CODE", "3"}, 3, "Error")
	f("now", []string{"FAKE_EXIT_AFTER", "0s", "FAKE_EXIT_CODE", "1"}, 1, "Error")

	// Without FAKE_EXIT_AFTER a container runs until told.
	id := r.createContainer(t, sb, containerConfig("manual", nil))
	r.startContainer(t, id)
	if err := r.srv.ExitContainer(id, 7); err != nil {
		t.Fatalf("ExitContainer: %v", err)
	}
	if st := r.containerStatus(t, id); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != 7 || st.Reason != "Error" {
		t.Fatalf("after ExitContainer: %v", st)
	}
	if err := r.srv.ExitContainer(id, 0); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("ExitContainer of an exited container: %v", err)
	}
	if err := r.srv.ExitContainer("missing", 0); !errors.Is(err, ErrNoContainer) {
		t.Fatalf("ExitContainer of an unknown container: %v", err)
	}

	// A stop before the timer fires wins; the timer must not exit it again.
	id = r.createContainer(t, sb, containerConfig("stopped-first", nil, "FAKE_EXIT_AFTER", "30ms", "FAKE_EXIT_CODE", "9"))
	r.startContainer(t, id)
	if _, err := r.rt.StopContainer(r.ctx, &runtimeapi.StopContainerRequest{ContainerId: id}); err != nil {
		t.Fatal(err)
	}
	before := r.containerStatus(t, id)
	if r.srv.containerTimerPending(id) {
		t.Fatal("exit timer still armed after stop")
	}
	if after := r.containerStatus(t, id); after.ExitCode != 143 || after.FinishedAt != before.FinishedAt {
		t.Fatalf("stopped container changed: %v → %v", before, after)
	}

	_, err := r.rt.CreateContainer(r.ctx, &runtimeapi.CreateContainerRequest{
		PodSandboxId: sb, Config: containerConfig("typo", nil, "FAKE_EXIT_AFTER", "soon"),
	})
	wantCode(t, err, codes.InvalidArgument)
}

func (s *Server) containerTimerPending(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.containers[id].timer != nil
}
