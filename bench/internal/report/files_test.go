package report

import (
	"encoding/xml"
	"errors"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/podline/podline/bench/internal/result"
)

// writtenFiles runs WriteFiles into a fresh directory and lists what it made.
func writtenFiles(t *testing.T, r *result.Run) (string, []string, error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	err := WriteFiles(dir, r)
	entries, rerr := os.ReadDir(dir)
	if rerr != nil {
		t.Fatalf("read %s: %v", dir, rerr)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return dir, names, err
}

// svgText checks that path is a well-formed SVG document and returns it.
func svgText(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(strings.NewReader(string(data)))
	root := ""
	for {
		tok, err := d.Token()
		if err != nil {
			t.Fatalf("%s: not XML: %v", path, err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			root = se.Name.Local
			break
		}
	}
	if root != "svg" {
		t.Fatalf("%s: root element %q, want svg", path, root)
	}
	for {
		if _, err := d.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("%s: broken XML: %v", path, err)
			}
			break
		}
	}
	return string(data)
}

func TestWriteFiles(t *testing.T) {
	r := fixture()
	dir, names, err := writtenFiles(t, r)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"churn-cpu.svg", "churn-startup-p99.svg", "cpu-vs-pods.svg", "idle-cpu-vs-pods.svg",
		"rss-vs-pods.svg", "startup-cdf-100.svg", "startup-cdf-1000.svg", "suite.json", "suite.md"}
	if !slices.Equal(names, want) {
		t.Fatalf("files %q, want %q", names, want)
	}
	for _, n := range names {
		if !strings.HasSuffix(n, ".svg") {
			continue
		}
		s := svgText(t, filepath.Join(dir, n))
		if !strings.Contains(s, "podline, default, fake-containerd") {
			t.Errorf("%s: legend entry missing", n)
		}
	}
	cdf := svgText(t, filepath.Join(dir, "startup-cdf-1000.svg"))
	for _, label := range []string{"Pod startup latency CDF, 1000 pods", "kubelet, default, fake-containerd",
		"podline, queue=channel, fake-containerd", "fraction of pods Running", "(ms)"} {
		if !strings.Contains(cdf, label) {
			t.Errorf("startup-cdf-1000.svg: missing %q", label)
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, MarkdownFile))
	if err != nil || string(md) != Markdown(r) {
		t.Errorf("suite.md differs from Markdown (err %v)", err)
	}
	back, err := ReadJSON(filepath.Join(dir, JSONFile))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, fixture()) {
		t.Errorf("JSON round trip changed the run:\n%+v", back)
	}
	if !reflect.DeepEqual(r, fixture()) {
		t.Error("WriteFiles changed the run it was given")
	}
}

func TestWriteFilesSparseRuns(t *testing.T) {
	f := func(r *result.Run, want []string) {
		t.Helper()
		dir, names, err := writtenFiles(t, r)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(names, want) {
			t.Fatalf("files %q, want %q", names, want)
		}
		for _, n := range names {
			if strings.HasSuffix(n, ".svg") {
				svgText(t, filepath.Join(dir, n))
			}
		}
	}
	f(&result.Run{}, []string{"suite.json", "suite.md"})
	// One pod count, no samples, zero CPU: no CDF and no log axis to break.
	f(&result.Run{
		Density: []result.Density{{Key: key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeZero, 10)}},
		Idle:    []result.Idle{{Key: key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeZero, 10)}},
		Churn:   []result.Churn{{Key: key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeZero, 10)}},
	}, []string{"cpu-vs-pods.svg", "idle-cpu-vs-pods.svg", "rss-vs-pods.svg", "suite.json", "suite.md"})
	// A single sample and a zero latency.
	f(&result.Run{Density: []result.Density{
		{Key: key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeZero, 1), StartupMs: []float64{0}, CPUSec: 0.1},
		{Key: key(result.AgentPodline, result.ModeDefault, result.RuntimeFakeZero, 2), StartupMs: []float64{0, 0.5, 900}, CPUSec: 0.2},
	}}, []string{"cpu-vs-pods.svg", "rss-vs-pods.svg", "startup-cdf-1.svg", "startup-cdf-2.svg", "suite.json", "suite.md"})
}

func TestWriteFilesKeepsGoingPastBadValues(t *testing.T) {
	r := fixture()
	r.Density[0].CPUSec = math.NaN() // JSON cannot hold NaN
	dir, names, err := writtenFiles(t, r)
	if err == nil || !strings.Contains(err.Error(), JSONFile) {
		t.Fatalf("err = %v, want one naming %s", err, JSONFile)
	}
	if slices.Contains(names, JSONFile) || !slices.Contains(names, MarkdownFile) || !slices.Contains(names, "cpu-vs-pods.svg") {
		t.Fatalf("files %q: want the summary and plots without suite.json", names)
	}
	svgText(t, filepath.Join(dir, "cpu-vs-pods.svg"))
}

func TestReadJSONErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadJSON(filepath.Join(dir, "missing.json")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"density": 3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadJSON(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad JSON: err = %v, want one naming the file", err)
	}
}
