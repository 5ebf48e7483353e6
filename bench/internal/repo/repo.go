// Package repo finds the podline repository the benchmarks build from.
// bench/ is a module of its own (so its plotting dependencies stay out of
// the agent's module graph), so the nearest go.mod is not the agent's: the
// search goes on past bench/go.mod to the root module's.
package repo

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
)

// rootModule is the go.mod line that marks the repository root.
const rootModule = "module github.com/podline/podline\n"

// Find walks up from the working directory to the directory whose go.mod
// declares the root module.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return FindFrom(dir)
}

// FindFrom walks up from dir.
func FindFrom(dir string) (string, error) {
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && (bytes.HasPrefix(b, []byte(rootModule)) || bytes.Contains(b, []byte("\n"+rootModule))) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no podline repository around the working directory: give -repo")
		}
		dir = parent
	}
}
