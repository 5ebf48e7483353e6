package pleg

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// FuzzNormalizeTimestamp reads any int64 as a runtime's timestamp: zero
// and below are unset; anything else is a date from 1973 on (the bands
// start at 1e11 of the unit below) and not past 5138; a count of seconds
// in its band reads back as itself.
func FuzzNormalizeTimestamp(f *testing.F) {
	for _, v := range []int64{0, -1, 1, 1_700_000_000, secondsBelow - 1, secondsBelow, millisBelow, microsBelow, 1<<63 - 1, -1 << 63} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v int64) {
		got := normalizeTimestamp(v)
		if v <= 0 {
			if !got.IsZero() {
				t.Fatalf("normalizeTimestamp(%d) = %v, want unset", v, got)
			}
			return
		}
		lo, hi := time.Unix(0, 0), time.Date(5139, 1, 1, 0, 0, 0, 0, time.UTC)
		if got.IsZero() || got.Before(lo) || !got.Before(hi) {
			t.Fatalf("normalizeTimestamp(%d) = %v, outside [%v, %v)", v, got, lo, hi)
		}
		if v < secondsBelow && got.Unix() != v {
			t.Fatalf("normalizeTimestamp(%d) = %v (%d s)", v, got, got.Unix())
		}
	})
}

// fuzzEvent builds one event from four bytes of a program: type, sandbox
// and subject (the sandbox or one of its containers), timestamp step, and
// which snapshots it carries (the sandbox's status and state; up to two of
// its containers' statuses). Identities are what a runtime keeps fixed:
// sandbox sb1 and its containers c1, c3 belong to pod u1, sb2 with c2, c4
// to u2.
func fuzzEvent(b [4]byte, at int64) *runtimeapi.ContainerEventResponse {
	evTypes := []runtimeapi.ContainerEventType{evCreated, evStarted, evStopped, evDeleted}
	sandboxes := []struct {
		id, uid string
		ctrs    [2]string
	}{{"sb1", "u1", [2]string{"c1", "c3"}}, {"sb2", "u2", [2]string{"c2", "c4"}}}
	sb := sandboxes[b[0]>>2&1]
	ev := &runtimeapi.ContainerEventResponse{
		ContainerEventType: evTypes[b[0]&3],
		ContainerId:        sb.id,
		CreatedAt:          at,
	}
	if subject := b[0] >> 3 & 3; subject > 0 {
		ev.ContainerId = sb.ctrs[(subject-1)&1]
	}
	if b[2]&1 == 1 {
		state := sbReady
		if b[2]&2 != 0 {
			state = sbNotReady
		}
		ev.PodSandboxStatus = sbStatus(sb.id, sb.uid, state)
	}
	states := []runtimeapi.ContainerState{ctrCreated, ctrRunning, ctrExited, ctrUnknown}
	for i := range min(int(b[3]&3), 2) {
		c := b[3] >> (2 + 3*i)
		ev.ContainersStatuses = append(ev.ContainersStatuses,
			ctrStatus(sb.ctrs[(int(c&1)+i)&1], sb.uid, "app", states[int(c>>1&3)], int32(c)))
	}
	return ev
}

// FuzzCRIEventsApply applies any sequence of CRI events to the cache.
// Whatever the order, the owners and the timestamps (which run backwards
// and jump units): no panic; a stale event changes nothing; an event
// applied twice changes nothing the second time; a container is cached in
// one pod only, under a sandbox of that pod; a deleted container is gone.
func FuzzCRIEventsApply(f *testing.F) {
	f.Add([]byte{0x00, 0x01, 0x09, 0x00, 0x09, 0x01, 0x09, 0x01, 0x0b, 0x02, 0x01, 0x02})
	f.Add([]byte{0x08, 0x01, 0x01, 0x01, 0x0f, 0xff, 0x09, 0x05})
	f.Fuzz(func(t *testing.T, data []byte) {
		s, cache := newApplySource()
		at := t0
		for i := 0; i+4 <= len(data) && i < 4*64; i += 4 {
			b := [4]byte(data[i : i+4])
			// The step: forwards, backwards, or into another unit.
			switch d := int64(int8(b[1])); {
			case d == -128:
				at /= 1_000_000_000
			default:
				at += d * int64(time.Millisecond)
			}
			ev := fuzzEvent(b, at)
			now := now0.Add(time.Duration(i) * time.Second)
			_, changed, stale := s.apply(ev, now)
			if stale && changed {
				t.Fatalf("event %d: stale, yet it changed the cache", i/4)
			}
			if _, again, _ := s.apply(ev, now); again {
				t.Fatalf("event %d (%s %s) changed the cache when applied a second time", i/4, ev.ContainerEventType, ev.ContainerId)
			}
			checkCache(t, i/4, cache, ev, stale)
		}
	})
}

func checkCache(t *testing.T, step int, cache *Cache, ev *runtimeapi.ContainerEventResponse, stale bool) {
	t.Helper()
	owner := map[string]types.UID{}
	for _, uid := range cache.UIDs() {
		p := cache.Get(uid)
		for _, c := range p.Containers {
			if o, dup := owner[c.ID]; dup {
				t.Fatalf("event %d: container %s in pods %s and %s", step, c.ID, o, uid)
			}
			owner[c.ID] = uid
			if !slices.ContainsFunc(p.Sandboxes, func(sb *Sandbox) bool { return sb.ID == c.SandboxID }) {
				t.Fatalf("event %d: container %s of pod %s in sandbox %q, which the pod does not have", step, c.ID, uid, c.SandboxID)
			}
		}
	}
	if !stale && ev.ContainerEventType == evDeleted {
		if o, ok := owner[ev.ContainerId]; ok {
			t.Fatalf("event %d: container %s deleted, still cached in pod %s", step, ev.ContainerId, o)
		}
	}
}
