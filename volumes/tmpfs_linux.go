package volumes

import "github.com/podline/podline/internal/tmpfs"

// ensureTmpfs mounts a tmpfs at dir unless one is there, so secrets and
// tokens never reach a disk. Mode 1777 is what the volume looks like on
// other nodes; containers get it read-only.
func ensureTmpfs(dir string) error { return tmpfs.Ensure(dir, 0o1777, 0) }
