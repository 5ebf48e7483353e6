package fake

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Hang is an injected fault: every call of Method about the pod sandbox
// or container named Name blocks until its caller gives up (its deadline
// or a closed connection), as a runtime stuck on one pod does. The other
// calls, the same method's for other pods included, go on as usual:
// what a client must survive is one stuck pod, not a dead runtime.
//
// Name matches a sandbox by its metadata name (the pod's name) and a
// container by its metadata name or by "<pod name>/<container name>";
// the second form singles out one pod's container when every pod's
// container has the same name. Only unary calls hang.
type Hang struct {
	Method string
	Name   string
}

// ParseHang parses "Method=name", refusing a method that is not a CRI
// method so that a typo does not silently inject nothing.
func ParseHang(s string) (Hang, error) {
	m, name, ok := strings.Cut(s, "=")
	if !ok || m == "" || name == "" {
		return Hang{}, fmt.Errorf("%q is not Method=name", s)
	}
	if !slices.Contains(methodNames(), m) {
		return Hang{}, fmt.Errorf("unknown CRI method %q", m)
	}
	return Hang{Method: m, Name: name}, nil
}

// HungCalls returns how many calls an injected Hang has blocked so far,
// the ones still blocked included: a harness checks it to know the fault
// was reached rather than merely configured.
func (s *Server) HungCalls() int64 { return s.hung.Load() }

// hang blocks a call that an injected Hang names until ctx ends, and
// returns the error the caller's ending gives; nil when no Hang applies.
func (s *Server) hang(ctx context.Context, method string, req any) error {
	if len(s.opts.Hangs) == 0 {
		return nil
	}
	var names []string
	for _, h := range s.opts.Hangs {
		if h.Method != method {
			continue
		}
		if names == nil {
			names = s.subjectNames(req)
		}
		if slices.Contains(names, h.Name) {
			s.hung.Add(1)
			<-ctx.Done()
			return status.FromContextError(ctx.Err()).Err()
		}
	}
	return nil
}

// subjectNames are the names a call is about: the sandbox's metadata name
// for a pod-level call; the container's name and "<pod>/<container>" for
// a container-level one. A call about an id the runtime does not hold is
// about nothing, and its handler answers NotFound.
func (s *Server) subjectNames(req any) []string {
	switch r := req.(type) {
	case *runtimeapi.RunPodSandboxRequest:
		return []string{r.GetConfig().GetMetadata().GetName()}
	case *runtimeapi.CreateContainerRequest:
		c := r.GetConfig().GetMetadata().GetName()
		s.mu.Lock()
		defer s.mu.Unlock()
		if sb := s.sandboxes[r.GetPodSandboxId()]; sb != nil {
			return []string{c, sb.name + "/" + c}
		}
		return []string{c}
	case interface{ GetContainerId() string }:
		s.mu.Lock()
		defer s.mu.Unlock()
		c := s.containers[r.GetContainerId()]
		if c == nil {
			return []string{}
		}
		if sb := s.sandboxes[c.sandboxID]; sb != nil {
			return []string{c.name, sb.name + "/" + c.name}
		}
		return []string{c.name}
	case interface{ GetPodSandboxId() string }:
		s.mu.Lock()
		defer s.mu.Unlock()
		if sb := s.sandboxes[r.GetPodSandboxId()]; sb != nil {
			return []string{sb.name}
		}
	}
	return []string{}
}
