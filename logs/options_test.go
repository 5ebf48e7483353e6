package logs

import (
	"errors"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseQuery(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 10, 10, 0, time.UTC)
	f := func(query string, want Options) {
		t.Helper()
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseQuery(q, now)
		if err != nil {
			t.Errorf("ParseQuery(%q): %v", query, err)
			return
		}
		if got.SinceTime != nil && want.SinceTime != nil && got.SinceTime.Equal(*want.SinceTime) {
			got.SinceTime = want.SinceTime
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("ParseQuery(%q) = %+v, want %+v", query, got, want)
		}
	}
	f("", Options{})
	f("follow=true&previous=true&timestamps=true", Options{Follow: true, Previous: true, Timestamps: true})
	// The API's booleans: only "false" and "0" are false, even empty is true.
	f("follow=1&timestamps=", Options{Follow: true, Timestamps: true})
	f("follow=FALSE&previous=0&timestamps=false", Options{})
	f("tailLines=0", Options{TailLines: ptr[int64](0)})
	f("tailLines=10&limitBytes=100", Options{TailLines: ptr[int64](10), LimitBytes: ptr[int64](100)})
	// "tail" is the old tailLines, and wins over it; "all" is no tail.
	f("tail=5&tailLines=10", Options{TailLines: ptr[int64](5)})
	f("tail=all&tailLines=10", Options{})
	f("sinceSeconds=60", Options{SinceTime: ptr(now.Add(-time.Minute))})
	f("sinceSeconds=9223372036854775807", Options{})
	f("sinceTime=2026-11-25T09:00:00Z", Options{SinceTime: ptr(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))})
	f("sinceTime=2026-11-25T11:00:00%2B02:00", Options{SinceTime: ptr(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))})
	f("sinceTime=", Options{})
	f("stream=All", Options{})
	// The API server's own parameters mean nothing here.
	f("container=c&insecureSkipTLSVerifyBackend=true", Options{})
}

func TestParseQueryRefuses(t *testing.T) {
	f := func(query, names string) {
		t.Helper()
		q, err := url.ParseQuery(query)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ParseQuery(q, time.Now())
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), names) {
			t.Errorf("ParseQuery(%q) = %v, want ErrBadRequest naming %q", query, err, names)
		}
	}
	f("tailLines=-1", "tailLines=-1")
	f("tailLines=ten", `tailLines="ten"`)
	f("tailLines=all", `tailLines="all"`)
	f("tail=x", `tail="x"`)
	f("limitBytes=0", "limitBytes=0")
	f("limitBytes=-5", "limitBytes=-5")
	f("limitBytes=1e3", `limitBytes="1e3"`)
	f("sinceSeconds=0", "sinceSeconds=0")
	f("sinceSeconds=-1", "sinceSeconds=-1")
	f("sinceSeconds=10&sinceTime=2026-11-25T09:00:00Z", "sinceSeconds")
	f("sinceTime=yesterday", `sinceTime="yesterday"`)
	f("sinceTime=2026-11-25", `sinceTime="2026-11-25"`)
	f("stream=Stdout", `stream="Stdout"`)
}
