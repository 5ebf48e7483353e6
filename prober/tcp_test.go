package prober

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	c := &v1.Container{Ports: []v1.ContainerPort{{Name: "db", ContainerPort: int32(port)}}}

	h := newTCPHandler(&v1.TCPSocketAction{Port: intstr.FromString("db")}, c)
	if out := h.run(context.Background(), target{ip: "127.0.0.1"}, time.Second); out.verdict != succeeded {
		t.Fatalf("listening: %+v", out)
	}
	select {
	case <-accepted:
	case <-time.After(time.Second):
		t.Fatal("the probe never connected")
	}

	ln.Close()
	h = newTCPHandler(&v1.TCPSocketAction{Port: intstr.FromInt(port)}, c)
	out := h.run(context.Background(), target{ip: "127.0.0.1"}, time.Second)
	if out.verdict != failed || !strings.Contains(out.output, "connection refused") {
		t.Fatalf("closed: %+v", out)
	}

	h = newTCPHandler(&v1.TCPSocketAction{Port: intstr.FromInt(70000)}, c)
	if out := h.run(context.Background(), target{ip: "127.0.0.1"}, time.Second); out.verdict != errored ||
		out.err.Error() != "invalid port number: 70000" {
		t.Fatalf("port out of range: %+v", out)
	}
}
