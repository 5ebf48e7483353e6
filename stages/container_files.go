package stages

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/podspec"
)

// noFollow keeps podline from following a symlink where it expects the
// file it made.
const noFollow = unix.O_NOFOLLOW

// nodeHostsFile is the node's hosts file, the start of a host-network
// pod's; a variable so tests can give their own.
var nodeHostsFile = podspec.EtcHosts

// maxNodeHosts bounds the node's hosts file read for each host-network
// container start.
const maxNodeHosts = 1 << 20

// prepareFiles writes the files the container's managed mounts name (see
// podspec.ContainerConfig) before the container is created: a runtime
// handed a missing source would make a directory there.
func (s *ContainerStage) prepareFiles(w *Work, act StartAction, podIPs []string) error {
	err := writeContainerFiles(s.Node, w.Pod, act, podIPs)
	if err != nil {
		w.Sync.setWaiting(act.Spec.Name, "CreateContainerConfigError", err.Error())
		recorderOr(s.Events).PodEvent(w.Pod, act.Spec.Name, v1.EventTypeWarning, "Failed", "Error: "+err.Error())
	}
	return err
}

func writeContainerFiles(node *Node, pod *v1.Pod, act StartAction, podIPs []string) error {
	if podspec.MountsTerminationLog(act.Spec) {
		if err := createTerminationLog(node, pod.UID, act.Spec.Name, act.Attempt); err != nil {
			return fmt.Errorf("create termination log: %w", err)
		}
	}
	if podspec.MountsHostsFile(pod, act.Spec, podIPs) {
		if err := writeHostsFile(node, pod, podIPs); err != nil {
			return fmt.Errorf("write hosts file: %w", err)
		}
	}
	return nil
}

// createTerminationLog makes the instance's empty termination log,
// writable by any user the container runs as (whatever podline's umask),
// and removes the one of the instance before the previous: the status
// shows two instances at most, and a crash-looping container must not
// leave a file per restart.
func createTerminationLog(node *Node, uid types.UID, name string, attempt uint32) error {
	path := podspec.TerminationLogPath(node, uid, name, attempt)
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|noFollow, 0o666)
	if err != nil {
		return err
	}
	err = f.Chmod(0o666)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if attempt >= 2 {
		old := podspec.TerminationLogPath(node, uid, name, attempt-2)
		if err := os.Remove(old); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// writeHostsFile writes the pod's hosts file when its content changed
// (a new sandbox address, another spec), as a new file renamed into
// place: a container reading its /etc/hosts meanwhile never sees half a
// file. Containers that run keep the file they were given.
func writeHostsFile(node *Node, pod *v1.Pod, podIPs []string) error {
	var nodeHosts []byte
	if pod.Spec.HostNetwork {
		var err error
		if nodeHosts, err = readNodeHosts(nodeHostsFile); err != nil {
			return err
		}
	}
	want, err := podspec.HostsFile(pod, podIPs, node, nodeHosts)
	if err != nil {
		return err
	}
	path := podspec.HostsFilePath(node, pod.UID)
	if sameContent(path, want) {
		return nil
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".etc-hosts-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(want)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// sameContent reports whether the file holds exactly want. Containers
// can write to the file, so no more than want's size and a byte is read.
func sameContent(path string, want []byte) bool {
	f, err := openNoFollow(path)
	if err != nil {
		return false
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(want))+1))
	return err == nil && bytes.Equal(got, want)
}

func readNodeHosts(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxNodeHosts+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxNodeHosts {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxNodeHosts)
	}
	return data, nil
}

// openNoFollow opens a regular file for reading without following a
// symlink in its last element, and without blocking on a FIFO.
func openNoFollow(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|noFollow|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	return f, nil
}
