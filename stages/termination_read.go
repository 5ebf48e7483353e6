package stages

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/logs"
	"github.com/podline/podline/pleg"
	"github.com/podline/podline/podspec"
)

// Bounds of the window read from the end of a container's log for its
// termination message: 8 KiB holds the 80 lines of most logs; a runtime
// splits lines at 16 KiB by default, so 1 MiB is far more than enough
// and bounds what a log of unlimited lines costs.
const (
	logWindowStart = 8 << 10
	logWindowMax   = 1 << 20
)

// readTerminationMessage is the message an exited container instance
// left: the end of its termination log, or under FallbackToLogsOnError,
// after a failure that left the file empty, the end of its log. The
// container wrote both, so neither is trusted: no symlink is followed,
// nothing but a regular file is read, and no more than the message's
// limit of the file is read into memory, however large it grew.
//
// The file is whole once the container's main process has exited, which
// the kernel may report before the runtime does; its output may still be
// on its way to the log then. final is false when the message would come
// from the log of an exit the runtime has not confirmed yet: ask again
// after its inspection.
func readTerminationMessage(node *Node, pod *v1.Pod, spec *v1.Container, c *pleg.Container) (msg string, final bool) {
	if podspec.MountsTerminationLog(spec) {
		path := podspec.TerminationLogPath(node, pod.UID, spec.Name, c.Attempt)
		data, err := readFileTail(path, podspec.MaxContainerMessage)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			// The instance predates the file, or no file was made: as
			// an empty one.
		case err != nil:
			return fmt.Sprintf("Error on reading termination log %s: %v", path, err), true
		default:
			msg = string(data)
		}
	}
	if msg != "" || !podspec.FallsBackToLogs(spec, c.ExitCode, c.Reason) {
		return msg, true
	}
	if !c.Detailed {
		return "", false
	}
	msg, err := readLogTail(node.LogsDir, podspec.ContainerLogFile(node, pod, spec.Name, c.Attempt))
	if err != nil {
		return fmt.Sprintf("Error on reading termination message from logs: %v", err), true
	}
	return msg, true
}

// readFileTail reads the last limit bytes of a regular file.
func readFileTail(path string, limit int64) ([]byte, error) {
	f, err := openNoFollow(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	return readEnd(f, fi.Size(), limit)
}

// readEnd reads the last n bytes of the first size bytes of f (all of
// them if fewer).
func readEnd(f *os.File, size, n int64) ([]byte, error) {
	n = min(n, size)
	buf := make([]byte, n)
	got, err := f.ReadAt(buf, size-n)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return buf[:got], nil
}

// readLogTail takes the termination message from the end of a CRI log
// beneath the pod log directory dir, reading a window from the end that
// grows until the message is whole.
func readLogTail(dir, path string) (string, error) {
	// Not openNoFollow: pods with a hostPath on the pod log directory
	// can swap any directory on the way for a link, not just the file.
	f, err := logs.OpenLog(dir, path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	size := fi.Size()
	for window := int64(logWindowStart); ; window *= 4 {
		window = min(window, logWindowMax, size)
		buf, err := readEnd(f, size, window)
		if err != nil {
			return "", err
		}
		msg, enough := podspec.LogTailMessage(buf, window == size)
		if enough || window == size || window == logWindowMax {
			return msg, nil
		}
	}
}
