package node

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

func TestNewHeartbeat(t *testing.T) {
	f := func(mutate func(*Config), wantErr string) {
		t.Helper()
		c := testConfig()
		c.Client = fake.NewClientset()
		mutate(&c)
		h, err := NewHeartbeat(c)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("err %v, want %q", err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.cfg.ReportFrequency != DefaultReportFrequency || h.cfg.LeaseDuration != DefaultLeaseDuration ||
			h.cfg.KubeletPort != DefaultKubeletPort || h.cfg.Hostname != "node-a" || h.cfg.Now == nil || h.cfg.Log == nil {
			t.Fatalf("defaults not filled: %+v", h.cfg)
		}
	}
	f(func(c *Config) {}, "")
	f(func(c *Config) { c.Client = nil }, "need a client")
	f(func(c *Config) { c.Name = "" }, "need a client and a node name")
	f(func(c *Config) { c.UpdateFrequency = -time.Second }, "negative")
	f(func(c *Config) { c.LeaseDuration = 500 * time.Millisecond }, "under a second")
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// run starts Run and returns a stop that cancels it and waits for it.
func (f *fixture) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { f.h.Run(ctx); close(done) }()
	return func() {
		cancel()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			f.t.Fatal("Run did not return after its context ended")
		}
	}
}

func (f *fixture) readyStatus() v1.ConditionStatus {
	n, err := f.client.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
	if err != nil {
		return ""
	}
	if c := findCondition(&n.Status, v1.NodeReady); c != nil {
		return c.Status
	}
	return ""
}

func TestRunKick(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.LeaseDuration = time.Second })
	stop := f.run()
	defer stop()
	waitFor(t, "registration", f.h.Registered)
	waitFor(t, "the lease", func() bool {
		_, err := f.client.CoordinationV1().Leases(LeaseNamespace).Get(context.Background(), "node-a", metav1.GetOptions{})
		return err == nil
	})
	if f.readyStatus() != v1.ConditionTrue {
		t.Fatal("not ready after registration")
	}
	// The update period is an hour: only Kick can make the check now.
	f.setReady(errors.New("runtime down"))
	f.h.Kick()
	waitFor(t, "NotReady after a kick", func() bool { return f.readyStatus() == v1.ConditionFalse })
	f.setReady(nil)
	f.h.Kick()
	f.h.Kick() // kicks coalesce and never block
	waitFor(t, "Ready after a kick", func() bool { return f.readyStatus() == v1.ConditionTrue })
	// The lease keeps being renewed (every 250ms here).
	f.advance(time.Minute)
	waitFor(t, "a renewal", func() bool {
		l, err := f.client.CoordinationV1().Leases(LeaseNamespace).Get(context.Background(), "node-a", metav1.GetOptions{})
		return err == nil && l.Spec.RenewTime.Time.Equal(f.clock())
	})
}

func TestRunRegistersADeletedNodeAgain(t *testing.T) {
	f := newFixture(t, nil)
	stop := f.run()
	defer stop()
	waitFor(t, "registration", f.h.Registered)
	if err := f.client.CoreV1().Nodes().Delete(context.Background(), "node-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	f.h.Kick()
	waitFor(t, "the node again", func() bool { return f.readyStatus() == v1.ConditionTrue && f.count("create", "nodes", "") == 2 })
}

func TestRunStopsWhileRegistering(t *testing.T) {
	f := newFixture(t, nil)
	f.failing("create", "nodes", 1<<30, errors.New("connection refused"))
	stop := f.run()
	waitFor(t, "a few tries", func() bool { return f.count("create", "nodes", "") >= 3 })
	stop()
	if f.h.Registered() {
		t.Fatal("registered without a node")
	}
}
