// Package logs reads what the node keeps as logs for the kubelet's HTTP
// API: a container's CRI log file for /containerLogs (kubectl logs), and
// the node's log directory for /logs/.
//
// The answers are meant to be byte for byte the kubelet's, because
// clients were written against it: the same query decoding and
// validation as the API server's PodLogOptions, the same joining of a
// runtime's partial entries into one line stamped with its first part's
// time, the same skipping of lines that do not parse, the same cut of
// limitBytes in the middle of a line. Only the CRI format is read: the
// Docker JSON lines the kubelet also takes were dockershim's.
//
// It differs where the kubelet's way costs or loses something. A tail
// reads the file backwards from its end, so `--tail=10` of a large log
// reads a block, not the file, and counts the lines the client sees, not
// the runtime's partial pieces. Followers share one inotify instance and
// one periodic check (Hub) instead of waking every second each, so a
// thousand `kubectl logs -f` fit in the kernel's per-user limit of
// inotify instances and an idle one is not woken at all. A follower
// survives the kubelet's own rotation (rename away, new file at the path)
// by finishing the old file before it starts on the new one, where the
// kubelet can lose the old file's last lines. /logs/ resolves every path beneath the directory
// in the kernel (openat2), so a symlink a pod planted under /var/log
// leads nowhere, and a container log is never read through a symlink
// beneath the pod log directory. Nothing is opened before it is known to be a regular file (or a
// directory to list): a FIFO or a device node a pod made is refused
// unopened.
//
// Which file belongs to which container, and whether it still runs, is
// the caller's knowledge: Read takes the pod log directory, a path
// beneath it and a function to ask.
package logs
