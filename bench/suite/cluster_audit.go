package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"time"
)

// The cluster scenario counts an agent's API requests in kube-apiserver's
// audit log rather than in the agent's client metrics: the log names the
// resource of every request, so that events can be left out, and it counts
// both agents the same way (podline's client metrics and the kubelet's are
// not the same series).

// auditPolicy logs every request of a node's identity once, when its
// response is complete (a watch, when it ends), at Metadata level (no
// bodies); nothing of any other user is logged.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived", "ResponseStarted"]
rules:
- level: Metadata
  userGroups: ["system:nodes"]
- level: None
`

// auditEvent is the part of an audit.k8s.io/v1 Event the count needs.
type auditEvent struct {
	Stage    string    `json:"stage"`
	Verb     string    `json:"verb"`
	Received time.Time `json:"requestReceivedTimestamp"`
	User     struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
}

// resource is "pods", "pods/status", or "nonresource" for a request
// without an object (discovery, /version).
func (e auditEvent) resource() string {
	if e.ObjectRef == nil || e.ObjectRef.Resource == "" {
		return "nonresource"
	}
	if e.ObjectRef.Subresource != "" {
		return e.ObjectRef.Resource + "/" + e.ObjectRef.Subresource
	}
	return e.ObjectRef.Resource
}

// requestCount is one window's requests by one user, events left out.
type requestCount struct {
	Total int `json:"total"`
	// ByVerb and ByVerbResource, e.g. "patch" and "patch pods/status".
	ByVerb         map[string]int `json:"by_verb"`
	ByVerbResource map[string]int `json:"by_verb_resource"`
	// Events are the event writes left out of the figures above.
	Events int `json:"events_excluded"`
}

// window is a span of wall time, both ends included.
type window struct{ from, to time.Time }

func (w window) holds(t time.Time) bool { return !t.Before(w.from) && !t.After(w.to) }

// countRequests reads audit events (JSON lines) from r and counts, for
// each window, the requests user made that the API server received in
// it. Lines that are not events (a half-written last line) are skipped.
func countRequests(r io.Reader, user string, windows ...window) ([]requestCount, error) {
	out := make([]requestCount, len(windows))
	for i := range out {
		out[i] = requestCount{ByVerb: map[string]int{}, ByVerbResource: map[string]int{}}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		var e auditEvent
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.User.Username != user {
			continue
		}
		// One entry per request: the policy omits the earlier stages,
		// and this keeps a policy that does not from counting twice.
		if e.Stage != "ResponseComplete" && e.Stage != "Panic" {
			continue
		}
		for i, w := range windows {
			if !w.holds(e.Received) {
				continue
			}
			c := &out[i]
			res := e.resource()
			if res == "events" {
				c.Events++
				continue
			}
			c.Total++
			c.ByVerb[e.Verb]++
			c.ByVerbResource[e.Verb+" "+res]++
		}
	}
	return out, sc.Err()
}

// auditOffset is the audit log's size now: a run reads from there on.
func auditOffset(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countAudit counts user's requests in the audit log at path from offset.
func countAudit(path string, offset int64, user string, windows ...window) ([]requestCount, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, err
	}
	return countRequests(f, user, windows...)
}
