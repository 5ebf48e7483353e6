// Package report turns one benchmark-suite run (bench/internal/result) into
// what a reader looks at: suite.json, a Markdown summary and SVG plots. It
// owns formatting and drawing only; it measures nothing and never changes
// the run it is given.
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/podline/podline/bench/internal/result"
)

// Files written by WriteFiles next to the plots.
const (
	JSONFile     = "suite.json"
	MarkdownFile = "suite.md"
)

// WriteFiles writes suite.json, suite.md and every plot the run has data
// for into dir, creating it. A failure in one file does not stop the
// others: a long run should keep whatever can still be written. All
// failures are returned together.
func WriteFiles(dir string, r *result.Run) error {
	if r == nil {
		return errors.New("write report: no run")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	var errs []error
	if data, err := json.MarshalIndent(r, "", "  "); err != nil {
		errs = append(errs, fmt.Errorf("encode %s: %w", JSONFile, err))
	} else if err := os.WriteFile(filepath.Join(dir, JSONFile), append(data, '\n'), 0o644); err != nil {
		errs = append(errs, fmt.Errorf("write %s: %w", JSONFile, err))
	}
	if err := os.WriteFile(filepath.Join(dir, MarkdownFile), []byte(Markdown(r)), 0o644); err != nil {
		errs = append(errs, fmt.Errorf("write %s: %w", MarkdownFile, err))
	}
	plots, err := buildPlots(r)
	if err != nil {
		errs = append(errs, err)
	}
	for _, np := range plots {
		if err := Save(np.p, filepath.Join(dir, np.name)); err != nil {
			errs = append(errs, fmt.Errorf("write %s: %w", np.name, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("write report to %s: %w", dir, err)
	}
	return nil
}

// ReadJSON loads a run stored by WriteFiles, to render it again.
func ReadJSON(path string) (*result.Run, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read run: %w", err)
	}
	var r result.Run
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("decode run %s: %w", path, err)
	}
	return &r, nil
}
