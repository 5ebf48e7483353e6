package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podline/podline/cri/fake"
)

func TestParseArgsLatency(t *testing.T) {
	ms := time.Millisecond
	// f checks the latency of a few methods (absent from want: the
	// default) and the default itself.
	f := func(args []string, wantDefault time.Duration, want map[string]time.Duration) {
		t.Helper()
		c, err := parseArgs(append([]string{"--listen", "/tmp/x.sock"}, args...), io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if c.opts.DefaultLatency != wantDefault {
			t.Fatalf("%v: default %v, want %v", args, c.opts.DefaultLatency, wantDefault)
		}
		for name, d := range want {
			got, ok := c.opts.Latency[name]
			if !ok {
				got = c.opts.DefaultLatency
			}
			if got != d {
				t.Fatalf("%v: %s takes %v, want %v", args, name, got, d)
			}
		}
	}
	containerd := map[string]time.Duration{"RunPodSandbox": 77 * ms, "CreateContainer": 35 * ms, "StartContainer": 35 * ms,
		"StopPodSandbox": 100 * ms, "ListContainers": ms}
	f(nil, ms, containerd)
	f([]string{"--zero-latency"}, 0, map[string]time.Duration{"RunPodSandbox": 0, "StopPodSandbox": 0, "Version": 0})
	f([]string{"--default-latency", "3ms"}, 3*ms, map[string]time.Duration{"RunPodSandbox": 77 * ms, "ListContainers": 3 * ms})
	f([]string{"--latency", "RunPodSandbox=120ms, StopContainer=2s"}, ms,
		map[string]time.Duration{"RunPodSandbox": 120 * ms, "StopContainer": 2 * time.Second, "CreateContainer": 35 * ms})
	f([]string{"--zero-latency", "--latency", "PullImage=1s"}, 0, map[string]time.Duration{"PullImage": time.Second, "RunPodSandbox": 0})
	f([]string{"--zero-latency", "--default-latency", "5ms"}, 5*ms, map[string]time.Duration{"RunPodSandbox": 5 * ms})
}

func TestParseArgsErrors(t *testing.T) {
	f := func(args []string, wantInErr string) {
		t.Helper()
		_, err := parseArgs(args, io.Discard)
		if !errors.Is(err, errUsage) || !strings.Contains(err.Error(), wantInErr) {
			t.Fatalf("%v: err %v, want a usage error naming %q", args, err, wantInErr)
		}
	}
	f(nil, "--listen is required")
	f([]string{"--listen", "/tmp/x.sock", "--latency", "RunPodSandbx=1ms"}, `unknown CRI method "RunPodSandbx"`)
	f([]string{"--listen", "/tmp/x.sock", "--latency", "RunPodSandbox"}, "not Method=duration")
	f([]string{"--listen", "/tmp/x.sock", "--latency", "RunPodSandbox=fast"}, `RunPodSandbox: bad duration "fast"`)
	f([]string{"--listen", "/tmp/x.sock", "--latency", "RunPodSandbox=-1s"}, "bad duration")
	f([]string{"--listen", "/tmp/x.sock", "extra"}, `unexpected argument "extra"`)
	f([]string{"--no-such-flag"}, "no-such-flag")

	if _, err := parseArgs([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
}

func TestParseArgsImagesAndFiles(t *testing.T) {
	c, err := parseArgs([]string{"--listen", "/tmp/x.sock"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(c.opts.Preloaded, ",") != "registry.k8s.io/pause:3.10,docker.io/library/busybox:1.36" ||
		!c.opts.LogFiles || c.opts.FsMountpoint != "/" || len(c.opts.Images) != 0 {
		t.Fatalf("defaults: %+v", c.opts)
	}
	c, err = parseArgs([]string{"--listen", "/tmp/x.sock", "--preload", "", "--log-files=false", "--fs-mountpoint", "/var/lib"}, io.Discard)
	if err != nil || len(c.opts.Preloaded) != 0 || c.opts.LogFiles || c.opts.FsMountpoint != "/var/lib" {
		t.Fatalf("set: %+v %v", c.opts, err)
	}
}

func TestParseArgsFaults(t *testing.T) {
	c, err := parseArgs([]string{"--listen", "/tmp/x.sock", "--hang", "RunPodSandbox=web-n1", "--hang", "ContainerStatus=db-n1/app", "--slow", "1s"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := []fake.Hang{{Method: "RunPodSandbox", Name: "web-n1"}, {Method: "ContainerStatus", Name: "db-n1/app"}}
	if !slices.Equal(c.opts.Hangs, want) || c.opts.Slow != time.Second {
		t.Fatalf("hangs %+v slow %v, want %+v and 1s", c.opts.Hangs, c.opts.Slow, want)
	}
	if c, err := parseArgs([]string{"--listen", "/tmp/x.sock", "--events", "end"}, io.Discard); err != nil || c.opts.Events != fake.EventsEnd {
		t.Fatalf("--events end: %q, %v", c.opts.Events, err)
	}
	for _, args := range [][]string{{"--hang", "RunPodSandbox"}, {"--hang", "NoSuchCall=x"}, {"--slow", "-1s"}, {"--events", "none"}} {
		if _, err := parseArgs(append([]string{"--listen", "/tmp/x.sock"}, args...), io.Discard); !errors.Is(err, errUsage) {
			t.Fatalf("%v: err %v, want a usage error", args, err)
		}
	}
}
