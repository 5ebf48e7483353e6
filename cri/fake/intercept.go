package fake

import (
	"context"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// ContainerdLikeDefaultLatency is what every call that ContainerdLikeLatency
// does not list takes in containerd: lists, statuses and stats answer in
// about a millisecond.
const ContainerdLikeDefaultLatency = time.Millisecond

// ContainerdLikeLatency returns the per-method latencies measured with
// containerd 2 and runc on the project's machines (host network, median of
// 10): RunPodSandbox 77 ms, CreateContainer+StartContainer ~70 ms,
// StopPodSandbox 100 ms, ExecSync ~40 ms. Use it with
// DefaultLatency: ContainerdLikeDefaultLatency for the other methods.
func ContainerdLikeLatency() map[string]time.Duration {
	return map[string]time.Duration{
		"RunPodSandbox":   77 * time.Millisecond,
		"CreateContainer": 35 * time.Millisecond,
		"StartContainer":  35 * time.Millisecond,
		"StopPodSandbox":  100 * time.Millisecond,
		"ExecSync":        40 * time.Millisecond,
	}
}

// unaryInterceptor counts the call, applies latency and injected faults, so
// that the handlers only model the runtime's state.
func (s *Server) unaryInterceptor(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := s.enter(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	if err := s.hang(ctx, path.Base(info.FullMethod), req); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func (s *Server) streamInterceptor(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if err := s.enter(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return handler(srv, ss)
}

// enter runs before every handler. The latency is slept without any lock
// held, so concurrent calls overlap as they do in a real runtime.
func (s *Server) enter(ctx context.Context, fullMethod string) error {
	name := path.Base(fullMethod)
	latency := s.opts.DefaultLatency
	if m := s.methods[name]; m != nil {
		m.calls.Add(1)
		latency = m.latency
	}
	latency += s.opts.Slow
	code, fail := s.faults.take(name)
	if latency > 0 {
		t := time.NewTimer(latency)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	if fail {
		return status.Errorf(code, "fake: injected %s fault in %s", code, name)
	}
	return nil
}

// Inject makes the next times calls of method fail with code; times < 0
// fails every call until ClearFaults, times == 0 clears this method's fault.
func (s *Server) Inject(method string, code codes.Code, times int) {
	s.faults.set(method, code, times)
}

// ClearFaults removes all injected faults.
func (s *Server) ClearFaults() { s.faults.clear() }

type faults struct {
	active atomic.Int32 // len(m): lets calls skip the lock when nothing is injected
	mu     sync.Mutex
	m      map[string]*fault
}

type fault struct {
	code codes.Code
	left int // < 0: forever
}

func (f *faults) set(method string, code codes.Code, times int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[string]*fault)
	}
	if times == 0 {
		delete(f.m, method)
	} else {
		f.m[method] = &fault{code: code, left: times}
	}
	f.active.Store(int32(len(f.m)))
}

func (f *faults) clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.m)
	f.active.Store(0)
}

func (f *faults) take(method string) (codes.Code, bool) {
	if f.active.Load() == 0 {
		return codes.OK, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	ft := f.m[method]
	if ft == nil {
		return codes.OK, false
	}
	if ft.left > 0 {
		ft.left--
		if ft.left == 0 {
			delete(f.m, method)
			f.active.Store(int32(len(f.m)))
		}
	}
	return ft.code, true
}
