// Package cri is podline's edge to the container runtime: a client for the
// CRI RuntimeService and ImageService over a unix socket.
//
// It owns the gRPC connections, request deadlines, the translation of gRPC
// status codes into error classes (ErrNotFound, ErrUnavailable, ...), the
// per-call latency metrics, and the label and annotation keys podline writes
// on runtime objects. It holds no pod state and makes no decisions: retries,
// ordering and reconciliation belong to the callers. The in-memory runtime
// in cri/fake serves the same API for unit tests and benchmarks.
package cri

import (
	"context"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// DefaultRequestTimeout applies when Dial is given no timeout; it matches
// the kubelet's --runtime-request-timeout default.
const DefaultRequestTimeout = 2 * time.Minute

// maxRecvMsgSize bounds one response. List calls on a node with thousands of
// containers exceed gRPC's 4 MiB default.
const maxRecvMsgSize = 16 << 20

// Client talks to one CRI runtime. It is safe for concurrent use.
type Client struct {
	timeout     time.Duration
	runtimeConn *grpc.ClientConn
	imageConn   *grpc.ClientConn // == runtimeConn when both endpoints are one socket
	runtime     runtimeapi.RuntimeServiceClient
	image       runtimeapi.ImageServiceClient
}

// Dial connects to the runtime and image services and checks, within
// requestTimeout, that the runtime answers Version. Endpoints are
// "unix:///path" or a plain path; an empty imageEndpoint shares the runtime
// connection. requestTimeout <= 0 means DefaultRequestTimeout. ctx bounds
// only the check, not the client's life.
func Dial(ctx context.Context, runtimeEndpoint, imageEndpoint string, requestTimeout time.Duration) (*Client, error) {
	if requestTimeout <= 0 {
		requestTimeout = DefaultRequestTimeout
	}
	runtimePath, err := socketPath(runtimeEndpoint)
	if err != nil {
		return nil, fmt.Errorf("runtime endpoint: %w", err)
	}
	imagePath := runtimePath
	if imageEndpoint != "" {
		if imagePath, err = socketPath(imageEndpoint); err != nil {
			return nil, fmt.Errorf("image endpoint: %w", err)
		}
	}

	c := &Client{timeout: requestTimeout}
	if c.runtimeConn, err = newConn(runtimePath); err != nil {
		return nil, fmt.Errorf("runtime endpoint %s: %w", runtimeEndpoint, err)
	}
	c.imageConn = c.runtimeConn
	if imagePath != runtimePath {
		if c.imageConn, err = newConn(imagePath); err != nil {
			c.runtimeConn.Close()
			return nil, fmt.Errorf("image endpoint %s: %w", imageEndpoint, err)
		}
	}
	c.runtime = runtimeapi.NewRuntimeServiceClient(c.runtimeConn)
	c.image = runtimeapi.NewImageServiceClient(c.imageConn)

	if _, err := c.Version(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("CRI runtime at %s does not answer (is it running?): %w", runtimeEndpoint, err)
	}
	return c, nil
}

// Close closes the connections. Calls in flight fail with ErrCanceled or
// ErrUnavailable.
func (c *Client) Close() error {
	err := c.runtimeConn.Close()
	if c.imageConn != c.runtimeConn {
		err = errors.Join(err, c.imageConn.Close())
	}
	return err
}

// RequestTimeout is the deadline applied to each ordinary call.
func (c *Client) RequestTimeout() time.Duration { return c.timeout }

// socketPath accepts "unix:///run/x.sock" or "/run/x.sock" and returns an
// absolute path. Other schemes (tcp, npipe) are not supported.
func socketPath(endpoint string) (string, error) {
	if endpoint == "" {
		return "", errors.New("empty endpoint: set it to the runtime's socket, e.g. unix:///run/containerd/containerd.sock")
	}
	p := endpoint
	if scheme, rest, ok := strings.Cut(endpoint, "://"); ok {
		if scheme != "unix" {
			return "", fmt.Errorf("endpoint %q: scheme %q not supported, only unix sockets", endpoint, scheme)
		}
		p = rest
	}
	if p == "" {
		return "", fmt.Errorf("endpoint %q has no socket path", endpoint)
	}
	return filepath.Abs(p)
}

func newConn(path string) (*grpc.ClientConn, error) {
	dial := func(ctx context.Context, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}
	return grpc.NewClient("passthrough:///"+path,
		grpc.WithContextDialer(dial),
		grpc.WithAuthority("localhost"),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxRecvMsgSize)),
		// A restarted runtime should be found again within seconds, not
		// after gRPC's default backoff of up to two minutes.
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{
				BaseDelay:  100 * time.Millisecond,
				Multiplier: 1.6,
				Jitter:     0.2,
				MaxDelay:   2 * time.Second,
			},
			MinConnectTimeout: 5 * time.Second,
		}),
	)
}
