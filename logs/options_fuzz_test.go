package logs

import (
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

// queryParams are the /containerLogs parameters ParseQuery reads.
var queryParams = []string{"follow", "previous", "timestamps", "sinceSeconds", "sinceTime", "limitBytes", "tailLines", "tail", "stream"}

// FuzzParseQuery parses any /containerLogs query. A refusal is a bad
// request naming a parameter the query holds; an answer holds what the
// API server's validation guarantees: tail and limit in range, a start
// not after now (sinceSeconds back from now exactly).
func FuzzParseQuery(f *testing.F) {
	f.Add("tailLines=10&sinceSeconds=60&limitBytes=100")
	f.Add("follow=1&timestamps=true&sinceTime=2024-01-01T00:00:00Z")
	f.Add("tail=all&tailLines=-1")
	f.Add("sinceSeconds=9223372036854775807")
	f.Add("limitBytes=0&stream=Stdout")
	f.Add("sinceTime=yesterday&sinceSeconds=1")
	f.Fuzz(func(t *testing.T, raw string) {
		q, _ := url.ParseQuery(raw) // a handler gets what parses
		now := time.Unix(1_700_000_000, 0)
		o, err := ParseQuery(q, now)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("ParseQuery(%q): %v is not a bad request", raw, err)
			}
			named := false
			for _, p := range queryParams {
				if _, given := q[p]; given && strings.Contains(err.Error(), p) {
					named = true
				}
			}
			if !named {
				t.Fatalf("ParseQuery(%q): %q names no parameter the query holds", raw, err)
			}
			return
		}
		if o.TailLines != nil && *o.TailLines < 0 {
			t.Fatalf("ParseQuery(%q): tail %d", raw, *o.TailLines)
		}
		if o.LimitBytes != nil && *o.LimitBytes < 1 {
			t.Fatalf("ParseQuery(%q): limit %d", raw, *o.LimitBytes)
		}
		if o.SinceTime != nil && q.Get("sinceSeconds") != "" && !o.SinceTime.Before(now) {
			t.Fatalf("ParseQuery(%q): since %v, not before now %v", raw, o.SinceTime, now)
		}
	})
}
