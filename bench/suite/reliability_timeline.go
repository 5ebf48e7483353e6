package main

import (
	"bufio"
	"io"
	"regexp"
	"strings"
	"time"
)

// The timeline of a containerd case: when each pod removed or added
// during the outage went through each step of its recovery, read after
// the run from what already records it: containerd's log (each CRI call
// at its start and its return), podline's log (its failed passes and
// "pod running") and the suite's own looks.
const (
	stepReconnect  = "podline: event stream reconnected"
	stepRetryDue   = "podline: back-off retry due"
	stepRunSandbox = "containerd: RunPodSandbox called"
	stepSandboxUp  = "containerd: sandbox returned"
	stepStarted    = "containerd: container started"
	stepRunning    = "podline: pod running"
	stepConverged  = "suite: pod Running, sandbox ready, container running"
	stepGone       = "suite: pod gone"
	stepStopCalled = "containerd: StopContainer called"
	stepStopDone   = "containerd: StopContainer returned"
	stepStopped    = "containerd: StopPodSandbox returned"
	stepRemoved    = "containerd: RemovePodSandbox returned"
)

// podTimeline is, per pod, the first time each step happened; a retry
// due is the last failed pass's, before the pod's first call reached
// containerd.
type podTimeline struct {
	ids       map[string]string               // sandbox or container id → pod
	first     map[string]map[string]time.Time // pod → step → when
	failures  map[string]int                  // pod → failed passes after up
	reconnect time.Time
	booted    time.Time // containerd's "successfully booted"
}

// newPodTimeline knows the pods' ids that existed before the outage;
// those of the pods started after it come from containerd's log.
func newPodTimeline(ids map[string]string) *podTimeline {
	if ids == nil {
		ids = map[string]string{}
	}
	return &podTimeline{ids: ids, first: map[string]map[string]time.Time{}, failures: map[string]int{}}
}

func (t *podTimeline) saw(pod, step string, at time.Time) {
	if pod == "" {
		return
	}
	m := t.first[pod]
	if m == nil {
		m = map[string]time.Time{}
		t.first[pod] = m
	}
	if _, ok := m[step]; !ok {
		m[step] = at
	}
}

// at is when pod reached step; ok is false when it never did.
func (t *podTimeline) at(pod, step string) (time.Time, bool) {
	at, ok := t.first[pod][step]
	return at, ok
}

// containerd 2 logs each CRI call as
//
//	time="2026-11-27T19:16:36.297779087Z" level=info msg="RunPodSandbox for name:\"bench-00100-bench\"  uid:\"…\"  namespace:\"default\" returns sandbox id \"47cb…\""
//
// with the quotes inside msg escaped.
var (
	ctrdLineTime = regexp.MustCompile(`^time="([^"]+)"`)
	ctrdRun      = regexp.MustCompile(`msg="RunPodSandbox for name:\\"([^\\"]+)\\"(?:.* returns sandbox id \\"([0-9a-f]+)\\")?`)
	ctrdCreated  = regexp.MustCompile(`msg="CreateContainer within sandbox \\"([0-9a-f]+)\\" .* returns container id \\"([0-9a-f]+)\\"`)
	ctrdByID     = regexp.MustCompile(`msg="(StartContainer for|StopContainer for|StopPodSandbox for|RemovePodSandbox) \\"([0-9a-f]+)\\"(.*)$`)
)

// readContainerd takes in containerd's log from where the outage
// began.
func (t *podTimeline) readContainerd(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		m := ctrdLineTime.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil {
			continue
		}
		if t.booted.IsZero() && strings.Contains(l, `msg="containerd successfully booted`) {
			t.booted = at
			continue
		}
		if m := ctrdRun.FindStringSubmatch(l); m != nil {
			if m[2] == "" {
				t.saw(m[1], stepRunSandbox, at)
			} else {
				t.ids[m[2]] = m[1]
				t.saw(m[1], stepSandboxUp, at)
			}
			continue
		}
		if m := ctrdCreated.FindStringSubmatch(l); m != nil {
			t.ids[m[2]] = t.ids[m[1]]
			continue
		}
		m = ctrdByID.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		pod, rest := t.ids[m[2]], m[3]
		switch {
		case m[1] == "StartContainer for" && strings.HasPrefix(rest, " returns successfully"):
			t.saw(pod, stepStarted, at)
		case m[1] == "StopContainer for" && strings.HasPrefix(rest, " with timeout"):
			t.saw(pod, stepStopCalled, at)
		case m[1] == "StopContainer for" && strings.HasPrefix(rest, " returns successfully"):
			t.saw(pod, stepStopDone, at)
		case m[1] == "StopPodSandbox for" && strings.HasPrefix(rest, " returns successfully"):
			t.saw(pod, stepStopped, at)
		case m[1] == "RemovePodSandbox" && strings.HasPrefix(rest, " returns successfully"):
			t.saw(pod, stepRemoved, at)
		}
	}
	return sc.Err()
}

// podline logs with log/slog's text handler:
//
//	time=2026-11-27T15:42:14.633Z level=WARN msg="pod sync failed" pod=default/bench-00100-bench uid=… err="…" retry_in=4s
var (
	plLine  = regexp.MustCompile(`^time=(\S+) level=\S+ msg="([^"]+)"`)
	plPod   = regexp.MustCompile(` pod=[^/\s]+/(\S+)`)
	plRetry = regexp.MustCompile(` retry_in=(\S+)`)
)

// readPodline takes in podline's log; lines before down are the run's
// start, not its recovery. Call it after readContainerd: a retry due
// counts only before the pod's first call reached containerd.
func (t *podTimeline) readPodline(r io.Reader, down, up time.Time) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		m := plLine.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, m[1])
		if err != nil || at.Before(down) {
			continue
		}
		var pod string
		if p := plPod.FindStringSubmatch(l); p != nil {
			pod = p[1]
		}
		switch m[2] {
		case "container event stream reconnected":
			if t.reconnect.IsZero() {
				t.reconnect = at
			}
		case "pod running":
			t.saw(pod, stepRunning, at)
		case "pod sync failed":
			if !at.Before(up) {
				t.failures[pod]++
			}
			retry := plRetry.FindStringSubmatch(l)
			if retry == nil || t.reachedRuntime(pod, at) {
				continue
			}
			if d, err := time.ParseDuration(retry[1]); err == nil {
				// The last failure's due wins: overwrite.
				if t.first[pod] == nil {
					t.first[pod] = map[string]time.Time{}
				}
				t.first[pod][stepRetryDue] = at.Add(d)
			}
		}
	}
	return sc.Err()
}

// reachedRuntime is whether a call of pod's recovery had reached
// containerd by at.
func (t *podTimeline) reachedRuntime(pod string, at time.Time) bool {
	for _, s := range []string{stepRunSandbox, stepStopCalled} {
		if c, ok := t.at(pod, s); ok && !c.After(at) {
			return true
		}
	}
	return false
}
