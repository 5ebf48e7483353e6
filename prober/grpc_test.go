package prober

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	v1 "k8s.io/api/core/v1"
)

// grpcServer serves on loopback, with the health service if hs is set.
func grpcServer(t *testing.T, hs *health.Server, onCall func(ua string)) int32 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		if ua := md.Get("user-agent"); len(ua) > 0 && onCall != nil {
			onCall(ua[0])
		}
		return next(ctx, req)
	}))
	if hs != nil {
		healthpb.RegisterHealthServer(s, hs)
	}
	go s.Serve(ln)
	t.Cleanup(s.Stop)
	return int32(ln.Addr().(*net.TCPAddr).Port)
}

func probeGRPC(port int32, service *string) outcome {
	h := newGRPCHandler(&v1.GRPCAction{Port: port, Service: service})
	return h.run(context.Background(), target{ip: "127.0.0.1"}, time.Second)
}

func TestGRPCHealth(t *testing.T) {
	hs := health.NewServer()
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_NOT_SERVING)
	var mu sync.Mutex
	var agent string
	port := grpcServer(t, hs, func(ua string) { mu.Lock(); agent = ua; mu.Unlock() })
	str := func(s string) *string { return &s }

	if out := probeGRPC(port, nil); out.verdict != succeeded || out.output != "service healthy" {
		t.Fatalf("overall health: %+v", out)
	}
	mu.Lock()
	if !strings.HasPrefix(agent, "kube-probe/1.36") {
		t.Errorf("user agent %q", agent)
	}
	mu.Unlock()
	if out := probeGRPC(port, str("db")); out.verdict != failed || out.output != `service unhealthy (responded with "NOT_SERVING")` {
		t.Fatalf("NOT_SERVING: %+v", out)
	}
	hs.SetServingStatus("db", healthpb.HealthCheckResponse_SERVING)
	if out := probeGRPC(port, str("db")); out.verdict != succeeded {
		t.Fatalf("db SERVING: %+v", out)
	}
	out := probeGRPC(port, str("nope"))
	if out.verdict != failed || out.output != "error: health rpc probe failed: rpc error: code = NotFound desc = unknown service" {
		t.Fatalf("unknown service: %+v", out)
	}
}

func TestGRPCFailures(t *testing.T) {
	port := grpcServer(t, nil, nil)
	out := probeGRPC(port, nil)
	if out.verdict != failed || !strings.HasPrefix(out.output, "error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ") {
		t.Fatalf("no health service: %+v", out)
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := int32(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	start := time.Now()
	out = probeGRPC(closed, nil)
	if out.verdict != failed || !strings.HasPrefix(out.output, `error: failed to connect service at "127.0.0.1:`) {
		t.Fatalf("nothing listening: %+v", out)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Fatalf("a refused connection held the run %v", took)
	}

	// Accepts and never speaks: the timeout ends the run.
	ln, _ = net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	h := newGRPCHandler(&v1.GRPCAction{Port: int32(ln.Addr().(*net.TCPAddr).Port)})
	out = h.run(context.Background(), target{ip: "127.0.0.1"}, 100*time.Millisecond)
	if out.verdict != failed || out.output != "timeout: health rpc did not complete within 100ms" {
		t.Fatalf("silent server: %+v", out)
	}
}
