package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/podline/podline/cri/fake"
)

// errUsage marks errors in the command line.
var errUsage = errors.New("usage")

// defaultPreload are the images podline's examples and scripts run
// (scripts/lib.sh PAUSE_IMAGE and BUSYBOX_IMAGE), present from the start
// so that no client needs to pull them.
const defaultPreload = "registry.k8s.io/pause:3.10,docker.io/library/busybox:1.36"

// config is the parsed command line.
type config struct {
	listen  string // CRI socket path
	control string // "" (none), host:port, or a unix socket path
	opts    fake.Options
	profile string // "containerd-like" or "zero", and whether flags changed it
}

// parseArgs parses args. Latencies apply in this order: the profile
// (containerd-like, or none with --zero-latency), then --default-latency
// for every method the profile does not name, then each --latency entry.
func parseArgs(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("fakecri", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		c            config
		zero         bool
		defaultLat   = fs.Duration("default-latency", fake.ContainerdLikeDefaultLatency, "latency of every method the profile does not name")
		overrides    = fs.String("latency", "", "per-method latencies, `Method=duration,...` (e.g. RunPodSandbox=120ms)")
		preload      = fs.String("preload", defaultPreload, "comma-separated images present from the start; any other image can be pulled")
		fsMountpoint = fs.String("fs-mountpoint", "/", "existing directory reported as the image and container filesystem")
		logFiles     = fs.Bool("log-files", true, "create each container's empty log file, as a runtime does")
		podSubnet    = fs.String("pod-subnet", fake.DefaultPodSubnet, "IPv4 /16 pod addresses come from; 127.x.0.0/16 gives each pod a loopback address")
	)
	fs.StringVar(&c.listen, "listen", "", "unix socket path to serve CRI on (required; a stale socket is replaced)")
	fs.StringVar(&c.control, "control", "", "HTTP control listener: host:port or a unix socket path (default none)")
	fs.BoolVar(&zero, "zero-latency", false, "every method answers at once (instead of containerd-like latencies)")
	// Faults for reliability tests: one stuck pod, or a runtime slow on
	// every call.
	fs.Func("hang", "fault: calls of `Method=name` about the pod sandbox or container named name block until the caller gives up;\n"+
		"name is a pod's name (sandbox metadata), a container's name, or pod/container; repeatable, e.g. RunPodSandbox=web-node1",
		func(v string) error {
			h, err := fake.ParseHang(v)
			if err != nil {
				return err
			}
			c.opts.Hangs = append(c.opts.Hangs, h)
			return nil
		})
	fs.DurationVar(&c.opts.Slow, "slow", 0, "fault: added to every call's latency (a runtime under load)")
	fs.Func("events", "GetContainerEvents: `stream` (default), end (every stream ends as soon as it opens, as k8s.io/cri-client's fake runtime's) or unimplemented (as containerd 1.6)",
		func(v string) (err error) {
			c.opts.Events, err = fake.ParseEventsMode(v)
			return err
		})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return c, err
		}
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if c.listen == "" {
		return c, fmt.Errorf("%w: --listen is required", errUsage)
	}

	c.opts.Latency, c.opts.DefaultLatency, c.profile = fake.ContainerdLikeLatency(), fake.ContainerdLikeDefaultLatency, "containerd-like"
	if zero {
		c.opts.Latency, c.opts.DefaultLatency, c.profile = map[string]time.Duration{}, 0, "zero"
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["default-latency"] {
		c.opts.DefaultLatency = *defaultLat
	}
	if c.opts.Slow < 0 {
		return c, fmt.Errorf("%w: --slow %v: negative", errUsage, c.opts.Slow)
	}
	if *overrides != "" {
		lat, err := parseLatencies(*overrides)
		if err != nil {
			return c, fmt.Errorf("%w: --latency: %v", errUsage, err)
		}
		maps.Copy(c.opts.Latency, lat)
	}
	if set["default-latency"] || *overrides != "" {
		c.profile += " with overrides"
	}
	c.opts.Preloaded = splitList(*preload)
	c.opts.FsMountpoint = *fsMountpoint
	c.opts.LogFiles = *logFiles
	if _, err := fake.ParsePodSubnet(*podSubnet); err != nil {
		return c, fmt.Errorf("%w: --pod-subnet: %v", errUsage, err)
	}
	c.opts.PodSubnet = *podSubnet
	return c, nil
}

// describeLatency says what each call takes, for the start line.
func (c *config) describeLatency() string {
	var b strings.Builder
	b.WriteString(c.profile)
	names := slices.Sorted(maps.Keys(c.opts.Latency))
	for i, name := range names {
		sep := " "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%s%s=%v", sep, name, c.opts.Latency[name])
	}
	fmt.Fprintf(&b, "; other calls %v", c.opts.DefaultLatency)
	if c.opts.Slow > 0 {
		fmt.Fprintf(&b, "; every call %v slower (--slow)", c.opts.Slow)
	}
	if c.opts.Events != fake.EventsStream {
		fmt.Fprintf(&b, "; GetContainerEvents %s (--events)", c.opts.Events)
	}
	for _, h := range c.opts.Hangs {
		fmt.Fprintf(&b, "; %s hangs for %s (--hang)", h.Method, h.Name)
	}
	return b.String()
}

// parseLatencies parses "Method=duration,...", refusing names that are no
// CRI method so that a typo does not silently leave a call at full speed.
func parseLatencies(spec string) (map[string]time.Duration, error) {
	methods := fake.Methods()
	out := make(map[string]time.Duration)
	for _, item := range splitList(spec) {
		name, val, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not Method=duration", item)
		}
		if !slices.Contains(methods, name) {
			return nil, fmt.Errorf("unknown CRI method %q (known: %s)", name, strings.Join(methods, ", "))
		}
		d, err := time.ParseDuration(val)
		if err != nil || d < 0 {
			return nil, fmt.Errorf("%s: bad duration %q", name, val)
		}
		out[name] = d
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
