package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
	"github.com/podline/podline/cri/fake"
	"github.com/podline/podline/stages"
)

// The kubelet's decision (getCgroupDriverFromCRI): the runtime's driver
// wins over the flag; a runtime without RuntimeConfig, or without a Linux
// answer, leaves the flag's; an unknown driver or a failed call stops the
// start.
func TestCgroupDriverOf(t *testing.T) {
	linux := func(d runtimeapi.CgroupDriver) *runtimeapi.RuntimeConfigResponse {
		return &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: d}}
	}
	f := func(flag cgroupfs.Driver, resp *runtimeapi.RuntimeConfigResponse, err error, want cgroupfs.Driver, wantFromRuntime bool, wantErr string) {
		t.Helper()
		got, fromRuntime, gotErr := cgroupDriverOf(flag, resp, err)
		if wantErr != "" {
			if gotErr == nil || !strings.Contains(gotErr.Error(), wantErr) {
				t.Errorf("cgroupDriverOf(%s, %v, %v) error %v, want %q", flag, resp, err, gotErr, wantErr)
			}
			return
		}
		if gotErr != nil || got != want || fromRuntime != wantFromRuntime {
			t.Errorf("cgroupDriverOf(%s, %v, %v) = %s, %v, %v; want %s, %v", flag, resp, err, got, fromRuntime, gotErr, want, wantFromRuntime)
		}
	}
	sd, fs := cgroupfs.DriverSystemd, cgroupfs.DriverCgroupfs
	f(fs, linux(runtimeapi.CgroupDriver_SYSTEMD), nil, sd, true, "")
	f(sd, linux(runtimeapi.CgroupDriver_CGROUPFS), nil, fs, true, "")
	f(sd, linux(runtimeapi.CgroupDriver_SYSTEMD), nil, sd, true, "")
	f(sd, &runtimeapi.RuntimeConfigResponse{}, nil, sd, false, "")
	f(fs, nil, fmt.Errorf("RuntimeConfig: %w", cri.ErrUnimplemented), fs, false, "")
	f(sd, nil, fmt.Errorf("RuntimeConfig: %w", cri.ErrUnimplemented), sd, false, "")
	f(fs, nil, fmt.Errorf("RuntimeConfig: %w", cri.ErrUnavailable), "", false, "unavailable")
	f(fs, linux(runtimeapi.CgroupDriver(7)), nil, "", false, "runtime returned an unknown cgroup driver 7")
}

type runtimeConfigAnswers struct {
	errs  []error
	resp  *runtimeapi.RuntimeConfigResponse
	calls int
}

func (r *runtimeConfigAnswers) RuntimeConfig(context.Context) (*runtimeapi.RuntimeConfigResponse, error) {
	r.calls++
	if len(r.errs) > 0 {
		err := r.errs[0]
		r.errs = r.errs[1:]
		return nil, err
	}
	return r.resp, nil
}

func testAgent(driverFlag string) (*agent, *bytes.Buffer) {
	var logs bytes.Buffer
	o := &options{cgroupDriver: driverFlag, cgroupRoot: "/", cgroupsPerQOS: true}
	return &agent{o: o, log: slog.New(slog.NewTextHandler(&logs, nil)),
		node: &stages.Node{Cgroups: cgroupfs.Layout{Root: "/", PerQOS: true}}}, &logs
}

// The driver in use goes into the node's layout (with the runtime's scope
// prefix) and the options /configz shows; a difference from the flag is
// logged once with both values. A runtime still starting gets three tries;
// one without the call gets one.
func TestChooseCgroupDriver(t *testing.T) {
	defer func(w time.Duration) { runtimeConfigWait = w }(runtimeConfigWait)
	runtimeConfigWait = time.Millisecond
	ctx := context.Background()
	systemd := &runtimeapi.RuntimeConfigResponse{Linux: &runtimeapi.LinuxRuntimeConfiguration{CgroupDriver: runtimeapi.CgroupDriver_SYSTEMD}}

	a, logs := testAgent("cgroupfs")
	rt := &runtimeConfigAnswers{errs: []error{cri.ErrUnavailable, cri.ErrDeadline}, resp: systemd}
	if err := a.chooseCgroupDriver(ctx, rt, "cri-o"); err != nil {
		t.Fatal(err)
	}
	if rt.calls != 3 || a.o.cgroupDriver != "systemd" || a.node.Cgroups.Driver != cgroupfs.DriverSystemd || a.node.Cgroups.ScopePrefix != "crio" {
		t.Errorf("%d calls, options %q, layout %+v", rt.calls, a.o.cgroupDriver, a.node.Cgroups)
	}
	if n := strings.Count(logs.String(), "\n"); n != 1 || !strings.Contains(logs.String(), "runtime=systemd flag=cgroupfs") {
		t.Errorf("log:\n%s\nwant one line with both drivers", logs.String())
	}
	raw, _ := json.Marshal(a.o.configz())
	if !strings.Contains(string(raw), `"cgroupDriver":"systemd"`) {
		t.Errorf("/configz does not show the driver in use: %s", raw)
	}

	a, logs = testAgent("systemd")
	rt = &runtimeConfigAnswers{errs: []error{fmt.Errorf("RuntimeConfig: %w", cri.ErrUnimplemented)}}
	if err := a.chooseCgroupDriver(ctx, rt, "containerd"); err != nil {
		t.Fatal(err)
	}
	if rt.calls != 1 || a.node.Cgroups.Driver != cgroupfs.DriverSystemd || a.node.Cgroups.ScopePrefix != "cri-containerd" {
		t.Errorf("containerd 1.6: %d calls, layout %+v; want one call and the flag's driver", rt.calls, a.node.Cgroups)
	}
	if !strings.Contains(logs.String(), "no RuntimeConfig") {
		t.Errorf("log:\n%s\nwant the fallback said", logs.String())
	}

	// The same driver as the flag: nothing to say.
	a, logs = testAgent("systemd")
	if err := a.chooseCgroupDriver(ctx, &runtimeConfigAnswers{resp: systemd}, "containerd"); err != nil || logs.Len() != 0 {
		t.Errorf("err %v, log %q", err, logs.String())
	}

	a, _ = testAgent("cgroupfs")
	rt = &runtimeConfigAnswers{errs: []error{cri.ErrUnavailable, cri.ErrUnavailable, cri.ErrUnavailable}, resp: systemd}
	if err := a.chooseCgroupDriver(ctx, rt, "containerd"); !errors.Is(err, cri.ErrUnavailable) || rt.calls != 3 {
		t.Errorf("a runtime that never answers: %v after %d calls, want the error after 3", err, rt.calls)
	}
	if a.node.Cgroups.Driver != "" || a.o.cgroupDriver != "cgroupfs" {
		t.Errorf("a failed choice changed the layout: %+v", a.node.Cgroups)
	}
}

// Through the CRI client, against the fake runtime, which reports the
// cgroupfs driver as the project's runtimes run.
func TestChooseCgroupDriverFromFakeRuntime(t *testing.T) {
	sock, _ := fake.Listen(t, fake.Options{})
	ctx := context.Background()
	rt, err := cri.Dial(ctx, sock, "", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	a, logs := testAgent("systemd")
	if err := a.chooseCgroupDriver(ctx, rt, fake.RuntimeName); err != nil {
		t.Fatal(err)
	}
	if a.node.Cgroups.Driver != cgroupfs.DriverCgroupfs || !strings.Contains(logs.String(), "runtime=cgroupfs flag=systemd") {
		t.Errorf("layout %+v, log %q", a.node.Cgroups, logs.String())
	}
}

func TestCgroupDriverFlag(t *testing.T) {
	for _, args := range [][]string{nil, {"--cgroup-driver=systemd"}, {"--cgroup-driver", "cgroupfs"}} {
		var o options
		if err := newFlagSet(&o).Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := o.validate(); err != nil {
			t.Errorf("%v: %v", args, err)
		}
		if args == nil && o.cgroupDriver != "cgroupfs" {
			t.Errorf("default --cgroup-driver %q, want the kubelet's cgroupfs", o.cgroupDriver)
		}
	}
	for _, v := range []string{"docker", "Systemd", ""} {
		var o options
		if err := newFlagSet(&o).Parse([]string{"--cgroup-driver=" + v}); err != nil {
			t.Fatal(err)
		}
		err := o.validate()
		want := fmt.Sprintf(`--cgroup-driver: unknown cgroup driver %q (want "cgroupfs" or "systemd")`, v)
		if err == nil || err.Error() != want {
			t.Errorf("--cgroup-driver=%s: %v, want %q", v, err, want)
		}
	}
}
