package prober

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
)

// grpcHandler is a grpc probe: grpc.health.v1.Health/Check on the pod IP,
// without TLS (the kubelet supports none), SERVING is a success.
type grpcHandler struct {
	port    string
	service string
}

func newGRPCHandler(g *v1.GRPCAction) *grpcHandler {
	h := &grpcHandler{port: strconv.Itoa(int(g.Port))}
	if g.Service != nil {
		h.service = *g.Service
	}
	return h
}

func (h *grpcHandler) run(ctx context.Context, t target, timeout time.Duration) outcome {
	addr := net.JoinHostPort(t.ip, h.port)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// One connection per run, closed with it, as the kubelet dials: a
	// channel kept per probe would hold a connection and its goroutines
	// for every gRPC probe between runs. passthrough: the target is an IP,
	// there is nothing to resolve.
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUserAgent(userAgent))
	if err != nil {
		return outcome{verdict: failed, output: fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)}
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: h.service})
	if err != nil {
		return outcome{verdict: failed, output: grpcFailure(addr, timeout, err)}
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return outcome{verdict: failed, output: fmt.Sprintf("service unhealthy (responded with %q)", s.String())}
	}
	return outcome{verdict: succeeded, output: "service healthy"}
}

// grpcFailure words a failed Check as the kubelet does. The call is
// fail-fast: a refused connection ends it at once (Unavailable) instead of
// holding a worker for the whole timeout.
func grpcFailure(addr string, timeout time.Duration, err error) string {
	st, _ := status.FromError(err)
	switch st.Code() {
	case codes.Unimplemented:
		return "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): " + st.Message()
	case codes.DeadlineExceeded:
		return fmt.Sprintf("timeout: health rpc did not complete within %v", timeout)
	case codes.Unavailable:
		return fmt.Sprintf("error: failed to connect service at %q: %+v", addr, err)
	}
	return fmt.Sprintf("error: health rpc probe failed: %+v", err)
}
