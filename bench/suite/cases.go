package main

import (
	"context"
	"fmt"
	"path/filepath"
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
