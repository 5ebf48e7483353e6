package main

import (
	"fmt"
	"strings"
)

// writeCPUSplit gives the start's and the delete's CPU per pod, split into
// the agent's own work (utime) and the kernel's on its behalf (stime). On
// a cgroup v1 host the kernel part grows with the pods already there: each
// new pod cgroup's cpuset hierarchy walks its siblings, which no layout
// the kubelet's cgroupfs driver makes can avoid. The split shows whether
// what grows is podline's or the kernel's.
func writeCPUSplit(b *strings.Builder, keys []int, by map[int][]scaleRun) {
	b.WriteString("\n## CPU per pod: podline's own (user) and the kernel's for it (system)\n\n")
	b.WriteString("| pods | runs | start user ms/pod | start system ms/pod | delete user ms/pod | delete system ms/pod |\n")
	b.WriteString("| ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, n := range keys {
		if n == 0 {
			continue
		}
		rs := by[n]
		per := func(get func(scaleRun) float64) string {
			return medOrDash(of(rs, func(r scaleRun) float64 { return get(r) * 1000 / float64(n) }), 3)
		}
		fmt.Fprintf(b, "| %d | %d | %s | %s | %s | %s |\n", n, len(rs),
			per(func(r scaleRun) float64 { return r.StartCPUSec - r.StartSysCPUSec }),
			per(func(r scaleRun) float64 { return r.StartSysCPUSec }),
			per(func(r scaleRun) float64 { return r.DeleteCPUSec - r.DeleteSysCPUSec }),
			per(func(r scaleRun) float64 { return r.DeleteSysCPUSec }))
	}
}
