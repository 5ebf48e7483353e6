package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/podline/podline/bench/internal/result"
)

// runCases runs each case runs(c) times in turn. A failed run is reported
// and the rest go on; the report is written after every run, so an
// interrupted suite keeps what ran, and once more at the end. name is the
// scenario's, and names its report (name.md in out).
func runCases[C, R any](ctx context.Context, name, out string, cases []C,
	runs func(C) int, label func(C) string,
	run func(c C, n int, label string) (R, error),
	write func(runs []R, failed []string) error,
) error {
	var done []R
	var failed []string
	for _, c := range cases {
		for i := range runs(c) {
			l := fmt.Sprintf("%s %s run %d/%d", name, label(c), i+1, runs(c))
			r, err := run(c, i+1, l)
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				progress("%s: FAILED: %v", l, err)
				failed = append(failed, fmt.Sprintf("%s: %v", l, err))
				continue
			}
			done = append(done, r)
			if err := write(done, failed); err != nil {
				return err
			}
		}
	}
	if err := write(done, failed); err != nil {
		return err
	}
	progress("%s: results in %s", name, filepath.Join(out, name+".md"))
	if len(failed) > 0 {
		return fmt.Errorf("%s: %d run(s) failed", name, len(failed))
	}
	return nil
}

// writeCases writes a case scenario's report into out: name.json with the
// machine, the agents' versions and every run, and name.md as rendered.
func writeCases[R any](out, name string, run *result.Run, runs []R, failed []string, markdown string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(struct {
		Machine any      `json:"machine"`
		Podline string   `json:"podline"`
		Kubelet string   `json:"kubelet"`
		Runs    []R      `json:"runs"`
		Failed  []string `json:"failed,omitempty"`
	}{run.Machine, run.Podline, run.Kubelet, runs, failed}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, name+".json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, name+".md"), []byte(markdown), 0o644)
}
