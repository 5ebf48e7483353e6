package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/podline/podline/stages"
)

func TestFlagDefaultsMatchTheKubelet(t *testing.T) {
	var o options
	if err := newFlagSet(&o).Parse(nil); err != nil {
		t.Fatal(err)
	}
	if o.maxPods != 110 || o.healthzPort != 10248 || o.healthzBindAddress != "127.0.0.1" || o.readOnlyPort != 0 ||
		o.fileCheckFrequency.String() != "20s" || o.httpCheckFrequency.String() != "20s" ||
		o.requestTimeout.String() != "2m0s" || !o.cgroupsPerQOS || o.podManifestPath != "/etc/kubernetes/manifests" {
		t.Fatalf("defaults: %+v", o)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
}

func TestBadFlagsNameTheFlag(t *testing.T) {
	f := func(args []string, want string) {
		t.Helper()
		var o options
		if err := newFlagSet(&o).Parse(args); err != nil {
			t.Fatal(err)
		}
		err := o.validate()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%v: error %v, want it to name %s", args, err, want)
		}
	}
	f([]string{"--max-pods=-1"}, "--max-pods")
	f([]string{"--pod-max-pids=-2"}, "--pod-max-pids")
	f([]string{"--anonymous-auth"}, "--anonymous-auth")
	f([]string{"--authorization-mode=Webhook"}, "--authorization-mode=Webhook needs --kubeconfig")
	f([]string{"--authorization-mode=RBAC", "--kubeconfig=k"}, "--authorization-mode")
	f([]string{"--tls-cert-file=c"}, "--tls-private-key-file")
	f([]string{"--tls-min-version=VersionTLS11"}, "--tls-min-version")
	f([]string{"--tls-cipher-suites=TLS_NOPE"}, "--tls-cipher-suites")
	f([]string{"--rotate-server-certificates"}, "--rotate-server-certificates needs --kubeconfig")
	f([]string{"--rotate-certificates"}, "--rotate-certificates needs --kubeconfig")
	f([]string{"--port=70000"}, "--port")
	f([]string{"--cluster-dns=10.0.0.10,nope"}, "--cluster-dns")
	f([]string{"--read-only-port=70000"}, "--read-only-port")
	f([]string{"--node-ip=x"}, "--node-ip")
	// NaN passed "<= 0" until FuzzFlags found it.
	f([]string{"--kube-api-qps=NaN"}, "--kube-api-qps")
	f([]string{"--event-qps=+Inf"}, "--event-qps")
	f([]string{"--pipeline-window=0"}, "--pipeline-window")
	f([]string{"--queue=chan"}, "--queue")
	f([]string{"--queue="}, "--queue")
	f([]string{"--start-concurrency=fast"}, "--start-concurrency")
	f([]string{"--start-concurrency=-1"}, "--start-concurrency")
	f([]string{"--allowed-unsafe-sysctls=net.core.somaxconn,kernel.panic"}, `--allowed-unsafe-sysctls: the sysctls "kernel.panic" are not known to be namespaced`)
	f([]string{"--allowed-unsafe-sysctls=net.*.x"}, "--allowed-unsafe-sysctls")
}

func TestAllowedUnsafeSysctls(t *testing.T) {
	var o options
	args := []string{"--allowed-unsafe-sysctls=net.core.somaxconn,kernel.msg*", "--allowed-unsafe-sysctls", "net/ipv6/*"}
	if err := newFlagSet(&o).Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.allowedUnsafeSysctls, " "); got != "net.core.somaxconn kernel.msg* net/ipv6/*" {
		t.Fatalf("sysctls = %q", got)
	}
}

func TestRepeatedHeaders(t *testing.T) {
	var o options
	if err := newFlagSet(&o).Parse([]string{"--manifest-url-header=a:1,b:2", "--manifest-url-header", "b:3"}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(o.manifestURLHeader, " "); got != "a:1 b:2 b:3" {
		t.Fatalf("headers = %q", got)
	}
}

func TestQueueFlag(t *testing.T) {
	f := func(args []string, want stages.QueueKind) {
		t.Helper()
		var o options
		if err := newFlagSet(&o).Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := o.validate(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if got, err := stages.ParseQueueKind(o.queue); err != nil || got != want {
			t.Fatalf("%v: queue = %v, %v; want %v", args, got, err, want)
		}
	}
	f(nil, stages.QueueLockFree)
	f([]string{"--queue=lockfree"}, stages.QueueLockFree)
	f([]string{"--queue=channel"}, stages.QueueChannel)
}

func TestStartConcurrency(t *testing.T) {
	for _, c := range []struct {
		arg   string
		limit int // 0: no gate
	}{
		{"", 4}, {"--start-concurrency=adaptive", 4}, {"--start-concurrency=7", 7}, {"--start-concurrency=0", 0},
	} {
		var o options
		args := []string{"--stage-workers=sandbox=16,containers=12"}
		if c.arg != "" {
			args = append(args, c.arg)
		}
		if err := newFlagSet(&o).Parse(args); err != nil {
			t.Fatal(err)
		}
		g, err := o.startGate()
		if err != nil {
			t.Fatalf("%q: %v", c.arg, err)
		}
		switch {
		case c.limit == 0 && g != nil:
			t.Fatalf("%q made a start gate", c.arg)
		case c.limit != 0 && (g == nil || g.Limit() != c.limit):
			t.Fatalf("%q: gate %v, want a limit of %d", c.arg, g, c.limit)
		}
	}
}

func TestRelativeDirsBecomeAbsolute(t *testing.T) {
	t.Chdir(t.TempDir())
	var o options
	if err := newFlagSet(&o).Parse([]string{"--root-dir=d/root", "--pod-logs-dir=logs"}); err != nil {
		t.Fatal(err)
	}
	if err := o.absolutePaths(); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	if o.rootDir != filepath.Join(wd, "d/root") || o.podLogsDir != filepath.Join(wd, "logs") {
		t.Fatalf("root %q, logs %q: want them under %s", o.rootDir, o.podLogsDir, wd)
	}
}

// --pod-max-pids as the kubelet's podPidsLimit: -1 (the default) and 0
// leave pods unlimited; a positive value bounds every pod cgroup.
func TestPodMaxPids(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int64 // 0: no limit
	}{{nil, 0}, {[]string{"--pod-max-pids=0"}, 0}, {[]string{"--pod-max-pids=-1"}, 0}, {[]string{"--pod-max-pids=4096"}, 4096}} {
		var o options
		if err := newFlagSet(&o).Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if err := o.validate(); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		got := o.podPidsLimit()
		if (got == nil) != (c.want == 0) || (got != nil && *got != c.want) {
			t.Errorf("%v: pids limit %v, want %d (0: none)", c.args, got, c.want)
		}
	}
}
