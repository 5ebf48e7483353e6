package fake

import (
	"net/netip"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

func TestSandboxLifecycle(t *testing.T) {
	r := newRig(t, Options{})
	cfg := sandboxConfig("web", map[string]string{"app": "web"})
	id := r.runSandbox(t, cfg)

	resp := r.sandboxStatus(t, id)
	st := resp.Status
	if st.State != runtimeapi.PodSandboxState_SANDBOX_READY {
		t.Fatalf("state %s, want READY", st.State)
	}
	if st.Metadata.Name != "web" || st.Metadata.Uid != "uid-web" || st.Metadata.Namespace != "default" || st.Metadata.Attempt != 1 {
		t.Fatalf("metadata not kept: %v", st.Metadata)
	}
	if st.Labels["app"] != "web" || st.Annotations["note"] != "web" {
		t.Fatalf("labels/annotations not kept: %v %v", st.Labels, st.Annotations)
	}
	if st.CreatedAt == 0 || resp.Timestamp < st.CreatedAt {
		t.Fatalf("createdAt %d, timestamp %d", st.CreatedAt, resp.Timestamp)
	}
	ip, err := netip.ParseAddr(st.Network.GetIp())
	if err != nil || !netip.MustParsePrefix("10.88.0.0/16").Contains(ip) {
		t.Fatalf("ip %q not in 10.88.0.0/16", st.Network.GetIp())
	}

	_, err = r.rt.RunPodSandbox(r.ctx, &runtimeapi.RunPodSandboxRequest{Config: cfg})
	wantCode(t, err, codes.AlreadyExists)

	for range 2 { // stop is idempotent
		if _, err := r.rt.StopPodSandbox(r.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatalf("StopPodSandbox: %v", err)
		}
		if got := r.sandboxStatus(t, id).Status.State; got != runtimeapi.PodSandboxState_SANDBOX_NOTREADY {
			t.Fatalf("after stop: state %s", got)
		}
	}
	for range 2 { // remove is idempotent
		if _, err := r.rt.RemovePodSandbox(r.ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatalf("RemovePodSandbox: %v", err)
		}
	}
	_, err = r.rt.PodSandboxStatus(r.ctx, &runtimeapi.PodSandboxStatusRequest{PodSandboxId: id})
	wantCode(t, err, codes.NotFound)
	if _, err := r.rt.StopPodSandbox(r.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
		t.Fatalf("StopPodSandbox of removed sandbox: %v", err)
	}
	// The name is free again once removed.
	r.runSandbox(t, cfg)
}

func TestHostNetworkSandboxHasNoIP(t *testing.T) {
	r := newRig(t, Options{})
	st := r.sandboxStatus(t, r.runSandbox(t, hostNetworkConfig("host"))).Status
	if st.Network.GetIp() != "" {
		t.Fatalf("host-network sandbox got ip %q", st.Network.GetIp())
	}
	if got := st.GetLinux().GetNamespaces().GetOptions().GetNetwork(); got != runtimeapi.NamespaceMode_NODE {
		t.Fatalf("network namespace mode %s, want NODE", got)
	}
}

func TestSandboxIPsUnique(t *testing.T) {
	r := newRig(t, Options{})
	seen := map[string]string{}
	check := func(id string) {
		t.Helper()
		ip := r.sandboxStatus(t, id).Status.Network.Ip
		if other, dup := seen[ip]; dup {
			t.Fatalf("ip %s given to %s and %s", ip, other, id)
		}
		seen[ip] = id
	}
	var ids []string
	for i := range 300 {
		id := r.runSandbox(t, sandboxConfig("p"+strconv.Itoa(i), nil))
		ids = append(ids, id)
		check(id)
	}
	// Stopped sandboxes give their address back; new ones still get
	// addresses no ready sandbox holds.
	for _, id := range ids[:100] {
		if _, err := r.rt.StopPodSandbox(r.ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: id}); err != nil {
			t.Fatal(err)
		}
		delete(seen, r.sandboxStatus(t, id).Status.Network.Ip)
	}
	for i := range 100 {
		check(r.runSandbox(t, sandboxConfig("q"+strconv.Itoa(i), nil)))
	}
}

func TestIPPoolExhaustionAndWrap(t *testing.T) {
	p := newIPPool("")
	n := lastHost - firstHost + 1
	for i := range n {
		if _, _, ok := p.take(); !ok {
			t.Fatalf("pool empty after %d of %d", i, n)
		}
	}
	if _, _, ok := p.take(); ok {
		t.Fatal("took an address from a full pool")
	}
	p.release(1234)
	host, ip, ok := p.take()
	if !ok || host != 1234 || ip != "10.88.4.210" {
		t.Fatalf("after release got %d %q %v, want 1234 10.88.4.210", host, ip, ok)
	}
}

func TestIPPoolSubnet(t *testing.T) {
	p := newIPPool("127.88.0.0/16")
	if _, ip, ok := p.take(); !ok || ip != "127.88.0.2" {
		t.Fatalf("first address %q %v, want 127.88.0.2", ip, ok)
	}
	for _, bad := range []string{"10.0.0.0/8", "fd00::/16", "x"} {
		if _, err := ParsePodSubnet(bad); err == nil {
			t.Errorf("ParsePodSubnet(%q) accepted it", bad)
		}
	}
}
