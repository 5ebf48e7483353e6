package stages_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// eventLog records what the stages report, as "reason container: message".
type eventLog struct {
	mu     sync.Mutex
	events []string
}

func (l *eventLog) PodEvent(pod *v1.Pod, container, eventType, reason, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, fmt.Sprintf("%s %s %s %s: %s", pod.Name, eventType, reason, container, message))
}

// wait returns the events once one contains every part of want.
func (l *eventLog) wait(t *testing.T, want ...string) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l.mu.Lock()
		got := slices.Clone(l.events)
		l.mu.Unlock()
		for _, e := range got {
			if containsAll(e, want) {
				return got
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no event with %q; got:\n%s", want, strings.Join(got, "\n"))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

func TestStagesReportEvents(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{events: log})
	pod := testPod("web")
	h.pipe.Upsert(pod)
	h.waitRunning(pod.UID)
	log.wait(t, "web Normal Pulling app:", `Pulling image "busybox:1.36"`)
	log.wait(t, "web Normal Pulled app: Successfully pulled image")
	log.wait(t, "web Normal Created app: Created container: app")
	log.wait(t, "web Normal Started app: Started container app")

	again := testPod("again")
	h.pipe.Upsert(again)
	h.waitRunning(again.UID)
	log.wait(t, "again Normal Pulled app:", "already present on machine")

	h.pipe.Remove(pod.UID)
	h.waitGone(pod.UID)
	log.wait(t, "web Normal Killing app: Stopping container app")

	cfg := testPod("cfg", func(p *v1.Pod) {
		p.Spec.Volumes = []v1.Volume{{Name: "conf", VolumeSource: v1.VolumeSource{ConfigMap: &v1.ConfigMapVolumeSource{}}}}
	})
	h.pipe.Upsert(cfg)
	log.wait(t, "cfg Warning FailedMount", `volume "conf"`, "needs the API server")

	big := testPod("big", func(p *v1.Pod) {
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("64")
	})
	h.pipe.Upsert(big)
	log.wait(t, "big Warning OutOfcpu")
}

func TestCrashLoopReportsBackOff(t *testing.T) {
	log := &eventLog{}
	h := newHarness(t, harnessOpts{events: log})
	pod := testPod("crash", withEnv("FAKE_EXIT_AFTER", "1ms"))
	h.pipe.Upsert(pod)
	log.wait(t, "crash Warning BackOff app: Back-off restarting failed container app in pod crash_default(uid-crash)")
}
