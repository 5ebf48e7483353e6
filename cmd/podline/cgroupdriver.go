package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podline/podline/cgroupfs"
	"github.com/podline/podline/cri"
)

// The runtime is asked for its cgroup driver as the kubelet asks it: three
// times, two seconds apart, while it may still be starting.
const runtimeConfigTries = 3

var runtimeConfigWait = 2 * time.Second

// runtimeConfigSource is the runtime's RuntimeConfig call.
type runtimeConfigSource interface {
	RuntimeConfig(context.Context) (*runtimeapi.RuntimeConfigResponse, error)
}

// cgroupDriverOf decides the cgroup driver from --cgroup-driver and the
// runtime's RuntimeConfig answer, as the kubelet decides it: the runtime's
// driver wins; a runtime without the call (ErrUnimplemented: containerd
// 1.x) or without a Linux answer leaves the flag's; a driver it names
// that podline does not know, or any other failure, is an error.
func cgroupDriverOf(flag cgroupfs.Driver, resp *runtimeapi.RuntimeConfigResponse, err error) (driver cgroupfs.Driver, fromRuntime bool, _ error) {
	switch {
	case errors.Is(err, cri.ErrUnimplemented):
		return flag, false, nil
	case err != nil:
		return "", false, err
	case resp.GetLinux() == nil:
		return flag, false, nil
	}
	switch d := resp.GetLinux().GetCgroupDriver(); d {
	case runtimeapi.CgroupDriver_SYSTEMD:
		return cgroupfs.DriverSystemd, true, nil
	case runtimeapi.CgroupDriver_CGROUPFS:
		return cgroupfs.DriverCgroupfs, true, nil
	default:
		return "", false, fmt.Errorf("runtime returned an unknown cgroup driver %d", d)
	}
}

// chooseCgroupDriver asks the runtime for its cgroup driver and sets the
// one podline uses: in the node's cgroup layout, with the runtime's scope
// prefix, and in the options, so /configz shows it.
func (a *agent) chooseCgroupDriver(ctx context.Context, rt runtimeConfigSource, runtimeName string) error {
	flag, err := cgroupfs.ParseDriver(a.o.cgroupDriver)
	if err != nil {
		return fmt.Errorf("--cgroup-driver: %w", err)
	}
	resp, askErr := askRuntimeConfig(ctx, rt)
	driver, fromRuntime, err := cgroupDriverOf(flag, resp, askErr)
	if err != nil {
		return fmt.Errorf("cgroup driver from the runtime (RuntimeConfig): %w", err)
	}
	logCgroupDriver(a.log, flag, driver, fromRuntime, askErr)
	if driver == cgroupfs.DriverSystemd && runtimeName != "containerd" && runtimeName != "cri-o" {
		a.log.Warn("runtime not known to podline: its containers' cgroups are taken to be containerd's scopes",
			"runtime", runtimeName, "scope", cgroupfs.ScopePrefix(runtimeName)+"-<id>.scope")
	}
	a.o.cgroupDriver = string(driver)
	a.node.Cgroups.Driver = driver
	a.node.Cgroups.ScopePrefix = cgroupfs.ScopePrefix(runtimeName)
	return nil
}

// askRuntimeConfig calls RuntimeConfig, again after a failure other than
// ErrUnimplemented, runtimeConfigTries times at most.
func askRuntimeConfig(ctx context.Context, rt runtimeConfigSource) (*runtimeapi.RuntimeConfigResponse, error) {
	var (
		resp *runtimeapi.RuntimeConfigResponse
		err  error
	)
	for try := range runtimeConfigTries {
		if try > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(runtimeConfigWait):
			}
		}
		resp, err = rt.RuntimeConfig(ctx)
		if err == nil || errors.Is(err, cri.ErrUnimplemented) {
			break
		}
	}
	return resp, err
}

// logCgroupDriver says once where the driver came from when that is not
// simply the flag.
func logCgroupDriver(log *slog.Logger, flag, driver cgroupfs.Driver, fromRuntime bool, askErr error) {
	switch {
	case errors.Is(askErr, cri.ErrUnimplemented):
		log.Info("the runtime does not report its cgroup driver (no RuntimeConfig); using --cgroup-driver", "cgroupDriver", flag)
	case fromRuntime && driver != flag:
		log.Info("using the runtime's cgroup driver, not --cgroup-driver's, as the kubelet does", "runtime", driver, "flag", flag)
	}
}
