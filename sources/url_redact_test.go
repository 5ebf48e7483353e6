package sources

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// secrets are the credentials the tests give in URLs and headers; none
// may show in a log line or an error.
var secrets = []string{"alice", "s3cret", "t0ken", "b34rer", "51gn"}

func checkNoSecrets(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(text, s) {
			t.Errorf("%s shows %q:\n%s", what, s, text)
		}
	}
}

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A fetch that fails, however it fails, is logged and reported with the
// URL's credentials redacted: the user and password, every query value,
// and the URL of a redirect it followed.
func TestURLSourceFailureHidesCredentials(t *testing.T) {
	redirect := "http://" + closedAddr(t) + "/signed?X-Amz-Signature=51gn"
	mux := http.NewServeMux()
	mux.HandleFunc("/status", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusForbidden) })
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, redirect, http.StatusFound) })
	mux.HandleFunc("/badredirect", func(w http.ResponseWriter, r *http.Request) {
		// A Location that does not parse: net/http's error quotes it.
		w.Header().Set("Location", "http://alice:s3cret@example.com:port/signed?X-Amz-Signature=51gn")
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/bad", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("kind: Pod\napiVersion: v1\n")) })
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	host := strings.TrimPrefix(hs.URL, "http://")
	header, err := ParseHeaders([]string{"Authorization: Bearer b34rer"})
	if err != nil {
		t.Fatal(err)
	}
	f := func(raw, want string) {
		t.Helper()
		log, logs := bufferLogger()
		m := NewMerger(log, HTTPSource)
		t.Cleanup(m.Close)
		src := NewURLSource(raw, header, "node1", time.Hour, m, log)
		src.sync(context.Background())
		err := src.Err()
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Err() = %q, want it to name %q", err, want)
		}
		checkNoSecrets(t, "Err()", err.Error())
		checkNoSecrets(t, "the log", logs.String())
		if !strings.Contains(logs.String(), "bad pod manifest URL") {
			t.Errorf("no failure logged:\n%s", logs)
		}
	}
	creds := "alice:s3cret@"
	f("http://"+creds+host+"/status?token=t0ken&v=1", "http://<redacted>@"+host+"/status?token=<redacted>&v=<redacted>: status 403")
	f("http://"+creds+host+"/bad?token=t0ken", "http://<redacted>@"+host+"/bad?token=<redacted>: ")
	// net/http's own error: the URL with the user (only the password
	// hidden) and the query.
	closed := closedAddr(t)
	f("http://"+creds+closed+"/pods?token=t0ken", `Get "http://<redacted>@`+closed+`/pods?token=<redacted>": dial tcp`)
	// The error names the redirect's target, signature and all.
	f("http://"+creds+host+"/redirect?token=t0ken", strings.Replace(redirect, "51gn", "<redacted>", 1))
	// A redirect's Location that does not parse shows nothing of itself.
	f("http://"+creds+host+"/badredirect?token=t0ken", `Get "http://<redacted>@`+host+`/badredirect?token=<redacted>": failed to parse Location header <redacted>`)
}

// A malformed header entry is reported by its place, never its text.
func TestParseHeadersHidesValues(t *testing.T) {
	f := func(entry, want string) {
		t.Helper()
		_, err := ParseHeaders([]string{"X-Ok: 1", entry})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHeaders(%q) = %v, want an error with %q", entry, err, want)
			return
		}
		checkNoSecrets(t, "the error", err.Error())
	}
	f("Bearer b34rer", "entry 2: want key:value")
	f("Bearer b34rer:x", "entry 2: the key is no HTTP header name")
	f("Authorization: Bearer b34rer\r\nX-Injected: 1", "entry 2: header Authorization: the value holds a control character")
}
