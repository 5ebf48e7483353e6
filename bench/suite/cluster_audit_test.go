package main

import (
	"strings"
	"testing"
	"time"
)

// Audit lines as kube-apiserver writes them, abridged.
const auditSample = `{"kind":"Event","stage":"ResponseComplete","verb":"patch","requestReceivedTimestamp":"2026-11-27T10:00:01.000000Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"pods","subresource":"status","namespace":"ns","name":"a"}}
{"kind":"Event","stage":"ResponseComplete","verb":"create","requestReceivedTimestamp":"2026-11-27T10:00:01.500000Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"events","namespace":"ns"}}
{"kind":"Event","stage":"ResponseStarted","verb":"watch","requestReceivedTimestamp":"2026-11-27T10:00:02.000000Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"pods"}}
{"kind":"Event","stage":"ResponseComplete","verb":"watch","requestReceivedTimestamp":"2026-11-27T10:00:02.000000Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"pods"}}
{"kind":"Event","stage":"ResponseComplete","verb":"get","requestReceivedTimestamp":"2026-11-27T10:00:02.000000Z","user":{"username":"system:node:n2"},"objectRef":{"resource":"pods"}}
{"kind":"Event","stage":"ResponseComplete","verb":"get","requestReceivedTimestamp":"2026-11-27T10:00:03.000000Z","user":{"username":"system:node:n1"}}
{"kind":"Event","stage":"ResponseComplete","verb":"delete","requestReceivedTimestamp":"2026-11-27T10:00:09.000000Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"pods","name":"a"}}
{"kind":"Event","stage":"ResponseComplete","verb":"update","requestReceivedTimestamp":"2026-11-27T10:00:20.000000Z","user":{"username":"system:node:n1"},"objectRef":{"resource":"leases","apiGroup":"coordination.k8s.io"}}
{"kind":"Event","stage":"Respo`

func TestCountRequests(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, "2026-11-27T10:00:"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got, err := countRequests(strings.NewReader(auditSample), "system:node:n1",
		window{at("00"), at("05")}, window{at("08"), at("10")})
	if err != nil {
		t.Fatal(err)
	}
	start, del := got[0], got[1]
	// patch pods/status, watch pods once (not per stage), a non-resource
	// get; the event and the other node's get are left out.
	if start.Total != 3 || start.Events != 1 {
		t.Errorf("start: %+v", start)
	}
	for k, want := range map[string]int{"patch pods/status": 1, "watch pods": 1, "get nonresource": 1} {
		if start.ByVerbResource[k] != want {
			t.Errorf("start %s = %d, want %d (%v)", k, start.ByVerbResource[k], want, start.ByVerbResource)
		}
	}
	if start.ByVerb["patch"] != 1 || start.ByVerb["watch"] != 1 || start.ByVerb["get"] != 1 {
		t.Errorf("start by verb %v", start.ByVerb)
	}
	// The lease update at :20 falls in neither window.
	if del.Total != 1 || del.ByVerbResource["delete pods"] != 1 {
		t.Errorf("delete: %+v", del)
	}
	if v := requestsPerPod(&start, 2); v != 1.5 {
		t.Errorf("per pod %v, want 1.5", v)
	}
	if v := requestsPerPod(nil, 2); v >= 0 {
		t.Errorf("per pod without a count %v, want negative", v)
	}
}
