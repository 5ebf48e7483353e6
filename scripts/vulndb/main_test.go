package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two reports become the database govulncheck reads: each report under
// ID/ as it was, every module it names in index/modules.json, and the
// reports' missing times filled with -modified.
func TestRunLaysOutTheDatabase(t *testing.T) {
	osv, out := t.TempDir(), filepath.Join(t.TempDir(), "db")
	reports := map[string]string{
		"GO-2026-0001": `{"id":"GO-2026-0001","modified":"0001-01-01T00:00:00Z","aliases":["CVE-1"],
			"affected":[{"package":{"name":"stdlib"}},{"package":{"name":"toolchain"}},{"package":{"name":"stdlib"}}]}`,
		"GO-2026-0002": `{"id":"GO-2026-0002","modified":"2026-11-20T10:00:00Z","affected":[{"package":{"name":"example.com/m"}}]}`,
	}
	for id, body := range reports {
		if err := os.WriteFile(filepath.Join(osv, id+".json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(osv, out, "2026-11-05T23:49:57Z"); err != nil {
		t.Fatal(err)
	}
	for id, body := range reports {
		got, err := os.ReadFile(filepath.Join(out, "ID", id+".json"))
		if err != nil || string(got) != body {
			t.Fatalf("ID/%s.json = %q, %v; want the report as it was", id, got, err)
		}
	}
	var mods []moduleMeta
	readJSON(t, filepath.Join(out, "index", "modules.json"), &mods)
	var names []string
	for _, m := range mods {
		var ids []string
		for _, v := range m.Vulns {
			ids = append(ids, v.ID)
		}
		names = append(names, m.Path+"="+strings.Join(ids, ","))
	}
	if got := strings.Join(names, " "); got != "example.com/m=GO-2026-0002 stdlib=GO-2026-0001 toolchain=GO-2026-0001" {
		t.Fatalf("modules index: %s", got)
	}
	if at := mods[1].Vulns[0].Modified; !at.Equal(time.Date(2026, 11, 5, 23, 49, 57, 0, time.UTC)) {
		t.Fatalf("a report without a time got %s, want -modified", at)
	}
	var db dbMeta
	readJSON(t, filepath.Join(out, "index", "db.json"), &db)
	if !db.Modified.Equal(time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("db modified %s, want the newest report's", db.Modified)
	}
}

// A report whose id is not its file's name is refused by name.
func TestRunRefusesAMisnamedReport(t *testing.T) {
	osv := t.TempDir()
	os.WriteFile(filepath.Join(osv, "GO-2026-0003.json"), []byte(`{"id":"GO-2026-0004"}`), 0o644)
	err := run(osv, filepath.Join(t.TempDir(), "db"), "")
	if err == nil || !strings.Contains(err.Error(), "GO-2026-0003.json") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
