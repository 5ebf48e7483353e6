package main

import (
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podline/podline/server"
)

// secretWords are the credentials the tests put in URLs and headers.
var secretWords = []string{"alice", "s3cret", "t0ken", "b34rer"}

func checkHidden(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range secretWords {
		if strings.Contains(text, s) {
			t.Errorf("%s shows %q: %s", what, s, text)
		}
	}
}

// parsed is options as run has them once the flags are read and the
// secret files loaded.
func parsed(t *testing.T, args ...string) *options {
	t.Helper()
	var o options
	fs := newFlagSet(&o)
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if err := o.loadManifestSecrets(); err != nil {
		t.Fatal(err)
	}
	o.flagValues = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { o.flagValues[f.Name] = f.Value.String() })
	o.cmdline = redactedArgs(fs, "podline", args)
	return &o
}

// /configz shows the manifest URL and its headers without their
// credentials, in the KubeletConfiguration and under "podline" alike.
func TestConfigzHidesManifestCredentials(t *testing.T) {
	o := parsed(t, "--manifest-url=https://alice:s3cret@example.com/pods?token=t0ken&node=n1",
		"--manifest-url-header=Authorization:Bearer b34rer,X-Node:n1")
	raw, err := json.Marshal(o.configz())
	if err != nil {
		t.Fatal(err)
	}
	checkHidden(t, "/configz", string(raw))
	var got struct {
		Kubelet struct {
			StaticPodURL       string              `json:"staticPodURL"`
			StaticPodURLHeader map[string][]string `json:"staticPodURLHeader"`
		} `json:"kubeletconfig"`
		Podline map[string]string `json:"podline"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	const url = "https://<redacted>@example.com/pods?token=<redacted>&node=<redacted>"
	if got.Kubelet.StaticPodURL != url || got.Podline["manifest-url"] != url {
		t.Errorf("staticPodURL %q, --manifest-url %q, want %q", got.Kubelet.StaticPodURL, got.Podline["manifest-url"], url)
	}
	if len(got.Kubelet.StaticPodURLHeader) != 2 || got.Podline["manifest-url-header"] != "Authorization:<redacted>,X-Node:<redacted>" {
		t.Errorf("staticPodURLHeader %v, --manifest-url-header %q", got.Kubelet.StaticPodURLHeader, got.Podline["manifest-url-header"])
	}
}

// The command line /debug/pprof/cmdline serves: every argument in its
// place and form, the secret flags' values redacted whichever way they
// were written.
func TestRedactedArgs(t *testing.T) {
	f := func(args []string, want ...string) {
		t.Helper()
		var o options
		got := redactedArgs(newFlagSet(&o), "/usr/bin/podline", args)
		want = append([]string{"/usr/bin/podline"}, want...)
		if !slices.Equal(got, want) {
			t.Errorf("redactedArgs(%q) =\n%q\nwant\n%q", args, got, want)
		}
	}
	f(nil)
	f([]string{"--max-pods=250", "--v", "4"}, "--max-pods=250", "--v", "4")
	f([]string{"--manifest-url=http://alice:s3cret@h/p?token=t0ken"}, "--manifest-url=http://<redacted>@h/p?token=<redacted>")
	f([]string{"-manifest-url", "http://h/p?token=t0ken", "--max-pods", "9"}, "-manifest-url", "http://h/p?token=<redacted>", "--max-pods", "9")
	f([]string{"--manifest-url-header", "Authorization:Bearer b34rer", "--manifest-url-header=X-A:1,X-B:2"},
		"--manifest-url-header", "Authorization:<redacted>", "--manifest-url-header=X-A:<redacted>,X-B:<redacted>")
	// A boolean flag takes no value from the next argument; another flag
	// does, even one that looks like a secret flag.
	f([]string{"--seccomp-default", "--manifest-url-header", "Authorization:Bearer b34rer"},
		"--seccomp-default", "--manifest-url-header", "Authorization:<redacted>")
	f([]string{"--hostname-override", "--manifest-url-header", "x"}, "--hostname-override", "--manifest-url-header", "x")
	// Where the flag package stops, nothing after is a flag's value.
	f([]string{"--max-pods=1", "--", "--manifest-url-header=a:b"}, "--max-pods=1", "--", "--manifest-url-header=a:b")
	// A flag missing its value at the end.
	f([]string{"--manifest-url-header"}, "--manifest-url-header")
	// Files hold the credentials: their names show.
	f([]string{"--manifest-url-file=/etc/podline/url"}, "--manifest-url-file=/etc/podline/url")
}

func writeSecret(t *testing.T, name, data string, mode os.FileMode) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return path
}

// The URL and headers come from files as they would from the flags.
func TestManifestSecretFiles(t *testing.T) {
	url := writeSecret(t, "url", "https://alice:s3cret@example.com/pods?token=t0ken\n", 0o600)
	headers := writeSecret(t, "headers", "# for the manifest server\nAuthorization: Bearer b34rer\r\n\nAccept: application/yaml, application/json\nX-Node:n1\n", 0o400)
	o := parsed(t, "--manifest-url-file", url, "--manifest-url-header-file="+headers)
	if o.manifestURL != "https://alice:s3cret@example.com/pods?token=t0ken" {
		t.Errorf("URL %q", o.manifestURL)
	}
	want := []string{"Authorization: Bearer b34rer", "Accept: application/yaml, application/json", "X-Node:n1"}
	if !slices.Equal(o.manifestURLHeader, want) {
		t.Errorf("headers %q, want %q", o.manifestURLHeader, want)
	}
	raw, _ := json.Marshal(o.configz())
	checkHidden(t, "/configz", string(raw))
	checkHidden(t, "the command line", strings.Join(o.cmdline, " "))
}

// A header value from --manifest-url-header-file may hold commas, which
// the flag's own form cannot: /configz and /debug/pprof/cmdline show each
// header redacted whole, never split at a comma of its value into
// pieces, one of which would show a piece of the credential as a header
// name ("t0ken,alice:s3cret" as "alice:<redacted>").
func TestHeaderFileValueWithCommaStaysHidden(t *testing.T) {
	headers := writeSecret(t, "headers", "X-Token: t0ken,alice:s3cret\nAccept: a/b, c/d\n", 0o600)
	o := parsed(t, "--manifest-url=https://example.com/pods", "--manifest-url-header-file="+headers)
	s := &server.Secure{Configz: o.configz, Cmdline: o.cmdline, Debugging: true}
	get := func(path string) string {
		t.Helper()
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d %q", path, rec.Code, rec.Body)
		}
		checkHidden(t, path, rec.Body.String())
		return rec.Body.String()
	}
	var got struct {
		Podline map[string]string `json:"podline"`
	}
	if err := json.Unmarshal([]byte(get("/configz")), &got); err != nil {
		t.Fatal(err)
	}
	if want := "X-Token:<redacted>,Accept:<redacted>"; got.Podline["manifest-url-header"] != want {
		t.Errorf("/configz --manifest-url-header %q, want %q", got.Podline["manifest-url-header"], want)
	}
	if got, want := get("/debug/pprof/cmdline"), "podline\x00--manifest-url=https://example.com/pods\x00--manifest-url-header-file="+headers; got != want {
		t.Errorf("/debug/pprof/cmdline %q, want %q", got, want)
	}
}

// A credentials file that is a named pipe is refused at once, naming the
// flag, the file and what it is: an open for reading would wait for a
// writer, and podline's start with it, forever.
func TestManifestSecretFileFIFORefused(t *testing.T) {
	f := func(flagName string) {
		t.Helper()
		fifo := filepath.Join(t.TempDir(), "fifo")
		if err := unix.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		var o options
		fs := newFlagSet(&o)
		if err := fs.Parse([]string{flagName + "=" + fifo}); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- o.loadManifestSecrets() }()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			// A writer's non-blocking open succeeds while a reader
			// waits, and lets it go.
			if w, werr := os.OpenFile(fifo, os.O_WRONLY|unix.O_NONBLOCK, 0); werr == nil {
				w.Close()
			}
			<-done
			t.Fatalf("%s: the start waited on the FIFO", flagName)
		}
		if want := flagName + " " + fifo + ": not a regular file: a named pipe"; err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", flagName, err, want)
		}
	}
	f("--manifest-url-file")
	f("--manifest-url-header-file")
}

// What is refused, and how the refusal reads: the flag, the file and the
// line, never the credentials.
func TestManifestSecretFilesRefused(t *testing.T) {
	good := writeSecret(t, "good", "https://example.com/pods\n", 0o600)
	f := func(want string, args ...string) {
		t.Helper()
		var o options
		fs := newFlagSet(&o)
		fs.SetOutput(io.Discard)
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		err := o.loadManifestSecrets()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", args, err, want)
			return
		}
		checkHidden(t, "the error", err.Error())
	}
	f("--manifest-url and --manifest-url-file are both set", "--manifest-url=https://x/", "--manifest-url-file="+good)
	f("--manifest-url-header and --manifest-url-header-file are both set", "--manifest-url-header=a:b", "--manifest-url-header-file="+good)
	open := writeSecret(t, "open", "https://alice:s3cret@example.com/\n", 0o644)
	f("mode 0644 lets other users read or change the credentials in it; make it 0600 (chmod go-rwx "+open+")", "--manifest-url-file="+open)
	groupWritable := writeSecret(t, "gw", "https://example.com/\n", 0o620)
	f("mode 0620", "--manifest-url-file="+groupWritable)
	f("--manifest-url-file "+filepath.Dir(good)+": not a regular file", "--manifest-url-file="+filepath.Dir(good))
	f("no such file", "--manifest-url-file=/nonexistent/url")
	empty := writeSecret(t, "empty", "\n", 0o600)
	f("--manifest-url-file "+empty+": empty; want the URL", "--manifest-url-file="+empty)
	two := writeSecret(t, "two", "https://alice:s3cret@example.com/\nhttps://other/\n", 0o600)
	f("--manifest-url-file "+two+":2: want the URL alone, on one line", "--manifest-url-file="+two)
	big := writeSecret(t, "big", strings.Repeat("x", maxSecretFile+1), 0o600)
	f("larger than 64 KiB", "--manifest-url-file="+big)
	badLine := writeSecret(t, "h", "X-Ok: 1\n\nBearer b34rer\n", 0o600)
	f("--manifest-url-header-file "+badLine+":3: want key:value", "--manifest-url-header-file="+badLine)
	ctl := writeSecret(t, "ctl", "Authorization: Bearer\x00b34rer\n", 0o600)
	f(":1: header Authorization: the value holds a control character", "--manifest-url-header-file="+ctl)
	// The URL is checked however it was given, and never quoted whole.
	f("--manifest-url: want an http or https URL with a host, got ftp://<redacted>@example.com/pods?token=<redacted>", "--manifest-url=ftp://alice:s3cret@example.com/pods?token=t0ken")
	f("--manifest-url: not a URL", "--manifest-url=http://alice:s3cret@example.com:port/?token=t0ken")
	rel := writeSecret(t, "rel", "example.com/pods?token=t0ken", 0o600)
	f("--manifest-url-file "+rel+": want an http or https URL with a host, got <redacted>", "--manifest-url-file="+rel)
	f("--manifest-url-header: manifest URL header entry 2: want key:value", "--manifest-url-header=X-Ok:1,Bearer b34rer")
}
