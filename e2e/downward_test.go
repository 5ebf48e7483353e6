//go:build e2e

package e2e

import (
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"
)

// A static pod on a node without an API server reads its downwardAPI
// volume: name, labels, annotations, a set limit, and unset limits that
// read as the node's allocatable, the same values its environment gets
// from the same references.
func TestDownwardAPIVolumeStandalone(t *testing.T) {
	a := startAgent(t)
	a.writeManifest("downward.yaml", fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: downward
  labels: {app: web, tier: front}
  annotations: {note: 'say "hi"'}
spec:
  terminationGracePeriodSeconds: 2
  volumes:
  - name: info
    downwardAPI:
      items:
      - {path: name, fieldRef: {fieldPath: metadata.name}}
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}
      - {path: tier, fieldRef: {fieldPath: "metadata.labels['tier']"}}
      - {path: mem_limit, resourceFieldRef: {containerName: app, resource: limits.memory, divisor: 1Mi}}
      - {path: cpu_limit, resourceFieldRef: {containerName: app, resource: limits.cpu}}
      - {path: mem_unset, resourceFieldRef: {containerName: other, resource: limits.memory, divisor: 1Mi}}
  - name: projected
    projected:
      sources:
      - downwardAPI:
          items:
          - {path: namespace, fieldRef: {fieldPath: metadata.namespace}}
  containers:
  - name: app
    image: %[1]s
    resources:
      limits: {memory: 64Mi}
    env:
    - {name: CPU_LIMIT, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
    command: ["sh", "-c", "trap 'exit 0' TERM; for f in name tier mem_limit cpu_limit; do echo \"$f: $(cat /info/$f)\"; done; echo \"labels: $(cat /info/labels | tr '\\n' ,)\"; echo \"annotations: $(cat /info/annotations | tr '\\n' ,)\"; echo \"namespace: $(cat /projected/namespace)\"; echo \"env cpu: $CPU_LIMIT\"; echo end-of-checks; while true; do sleep 1; done"]
    volumeMounts:
    - {name: info, mountPath: /info}
    - {name: projected, mountPath: /projected}
  - name: other
    image: %[1]s
    env:
    - {name: MEM_LIMIT, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
    command: ["sh", "-c", "trap 'exit 0' TERM; echo \"mem_unset: $(cat /info/mem_unset)\"; echo \"env mem: $MEM_LIMIT\"; echo end-of-checks; while true; do sleep 1; done"]
    volumeMounts:
    - {name: info, mountPath: /info}
`, busybox))
	p := a.waitRunning("downward", 60*time.Second)
	var app, other map[string]string
	eventually(t, 20*time.Second, "the containers printed their checks", func() (bool, string) {
		app, other = logFields(a.readLog(p, "app", 0)), logFields(a.readLog(p, "other", 0))
		_, a1 := app["end-of-checks"]
		_, a2 := other["end-of-checks"]
		return a1 && a2, fmt.Sprintf("app %v, other %v", app, other)
	})
	want := map[string]string{
		"name":      "downward-" + nodeName,
		"tier":      "front",
		"labels":    `app="web",tier="front"`,
		"namespace": "default",
		"mem_limit": "64",
		// No cpu limit: the node's allocatable, all its cores here, as
		// the environment reads it.
		"cpu_limit": fmt.Sprint(goruntime.NumCPU()),
		"env cpu":   fmt.Sprint(goruntime.NumCPU()),
	}
	var wrong []string
	for _, k := range sortedKeys(want) {
		if app[k] != want[k] {
			wrong = append(wrong, fmt.Sprintf("%s: %q, want %q", k, app[k], want[k]))
		}
	}
	// The whole map, one sorted line per key: podline's own annotations of
	// a static pod (hash, seen, source), then the manifest's.
	if got := app["annotations"]; !strings.HasPrefix(got, fmt.Sprintf(`kubernetes.io/config.hash="%s",kubernetes.io/config.seen="`, p.UID)) ||
		!strings.HasSuffix(got, `",kubernetes.io/config.source="file",note="say \"hi\""`) {
		wrong = append(wrong, fmt.Sprintf("annotations: %q", got))
	}
	// A container without a memory limit reads the node's allocatable, in
	// a file as in its environment.
	if got, env := other["mem_unset"], other["env mem"]; got != env || got == "" || got == "0" || got == "64" {
		wrong = append(wrong, fmt.Sprintf("unset memory limit: file %q, env %q; want both the node's allocatable", got, env))
	}
	if len(wrong) > 0 {
		t.Errorf("downwardAPI volume on a standalone node:\n  %s", strings.Join(wrong, "\n  "))
	}
}
