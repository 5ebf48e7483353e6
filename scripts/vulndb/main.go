// Command vulndb lays out a directory of OSV reports (golang.org/x/vulndb's
// data/osv, as the Go module proxy serves it) as the Go vulnerability
// database that govulncheck reads with -db file:///dir: ID/<id>.json and
// the index/ files. It exists because vuln.go.dev cannot be reached from
// every machine that lints podline, while the module proxy can.
//
//	go run ./scripts/vulndb -osv $(go env GOMODCACHE)/golang.org/x/vulndb@v.../data/osv -out DIR -modified 2026-11-05T23:49:57Z
//
// The reports in that repository carry no modification time (the
// database's own builder takes it from git history); each zero time is
// given -modified, the date of the module version.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// entry is the part of an OSV report the index needs.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Aliases  []string  `json:"aliases,omitempty"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

// The index files, as govulncheck's client reads them. No module entry
// names a fixed version: the client then reads every report of a module
// it finds and decides from the report's own ranges.
type (
	dbMeta struct {
		Modified time.Time `json:"modified"`
	}
	moduleVuln struct {
		ID       string    `json:"id"`
		Modified time.Time `json:"modified"`
	}
	moduleMeta struct {
		Path  string       `json:"path"`
		Vulns []moduleVuln `json:"vulns"`
	}
	vulnMeta struct {
		ID       string    `json:"id"`
		Modified time.Time `json:"modified"`
		Aliases  []string  `json:"aliases,omitempty"`
	}
)

func main() {
	osvDir := flag.String("osv", "", "directory of OSV reports (GO-*.json)")
	out := flag.String("out", "", "directory to write the database to (made; must not exist)")
	modified := flag.String("modified", "", "RFC 3339 time for reports without one")
	flag.Parse()
	if err := run(*osvDir, *out, *modified); err != nil {
		fmt.Fprintln(os.Stderr, "vulndb:", err)
		os.Exit(1)
	}
}

func run(osvDir, out, modified string) error {
	if osvDir == "" || out == "" {
		return errors.New("-osv and -out are required")
	}
	var stamp time.Time
	if modified != "" {
		t, err := time.Parse(time.RFC3339, modified)
		if err != nil {
			return fmt.Errorf("-modified: %w", err)
		}
		stamp = t
	}
	files, err := filepath.Glob(filepath.Join(osvDir, "GO-*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no GO-*.json report in %s", osvDir)
	}
	if err := os.MkdirAll(filepath.Join(out, "ID"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(out, "index"), 0o755); err != nil {
		return err
	}
	db := dbMeta{}
	modules := map[string]*moduleMeta{}
	var vulns []vulnMeta
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(data, &e); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if e.ID == "" || e.ID+".json" != filepath.Base(f) {
			return fmt.Errorf("%s: report id %q does not match its file name", f, e.ID)
		}
		if e.Modified.IsZero() {
			e.Modified = stamp
		}
		if e.Modified.After(db.Modified) {
			db.Modified = e.Modified
		}
		vulns = append(vulns, vulnMeta{ID: e.ID, Modified: e.Modified, Aliases: e.Aliases})
		seen := map[string]bool{}
		for _, a := range e.Affected {
			name := a.Package.Name
			if name == "" || seen[name] {
				continue
			}
			seen[name] = true
			m := modules[name]
			if m == nil {
				m = &moduleMeta{Path: name}
				modules[name] = m
			}
			m.Vulns = append(m.Vulns, moduleVuln{ID: e.ID, Modified: e.Modified})
		}
		// The report goes in as it is: govulncheck reads its ranges.
		if err := os.WriteFile(filepath.Join(out, "ID", e.ID+".json"), data, 0o644); err != nil {
			return err
		}
	}
	mods := make([]*moduleMeta, 0, len(modules))
	for _, m := range modules {
		sort.Slice(m.Vulns, func(i, j int) bool { return m.Vulns[i].ID < m.Vulns[j].ID })
		mods = append(mods, m)
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	sort.Slice(vulns, func(i, j int) bool { return strings.Compare(vulns[i].ID, vulns[j].ID) < 0 })
	for name, v := range map[string]any{"db.json": db, "modules.json": mods, "vulns.json": vulns} {
		data, err := json.Marshal(v)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "index", name), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("%d reports, %d modules, modified %s\n", len(vulns), len(mods), db.Modified.Format(time.RFC3339))
	return nil
}
