// Command ociimage writes a single-layer OCI image layout, as a tar that
// `ctr images import` reads, from a list of files, directories and symlinks
// given on the command line. The podline dev harness builds its pause and
// busybox images with it because no registry can be reached.
//
// The output is reproducible: entries are sorted, owned by root, stamped with
// a fixed time, and the JSON carries no build time, so the same inputs give
// the same manifest digest. It owns only the file named by -out.
//
//	ociimage -out busybox.tar -ref docker.io/library/busybox:1.36 \
//	    -file bin/busybox=/bin/busybox -link bin/sh=busybox -dir tmp:1777 \
//	    -cmd '["sh"]'
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
)

// listFlag collects a flag given more than once.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "ociimage: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("ociimage", flag.ContinueOnError)
	var refs, files, dirs, links, env listFlag
	out := fs.String("out", "", "output tar (OCI image layout)")
	entrypoint := fs.String("entrypoint", "", `image entrypoint as a JSON array, e.g. '["/pause"]'`)
	cmd := fs.String("cmd", "", `image cmd as a JSON array, e.g. '["sh"]'`)
	workdir := fs.String("workdir", "", "image working directory")
	user := fs.String("user", "", "image user")
	fs.Var(&refs, "ref", "image name with tag (repeatable: one index entry each)")
	fs.Var(&files, "file", "PATH=SRC: regular file from the host; mode from SRC (repeatable)")
	fs.Var(&dirs, "dir", "PATH[:OCTAL-MODE]: directory, default mode 0755 (repeatable)")
	fs.Var(&links, "link", "PATH=TARGET: symlink (repeatable)")
	fs.Var(&env, "env", "KEY=VALUE for the image config (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" || len(refs) == 0 {
		return fmt.Errorf("-out and at least one -ref are required")
	}

	var spec imageSpec
	spec.refs = refs
	spec.config.Env = env
	spec.config.WorkingDir = *workdir
	spec.config.User = *user
	if err := parseArgv(*entrypoint, &spec.config.Entrypoint); err != nil {
		return fmt.Errorf("parse -entrypoint: %w", err)
	}
	if err := parseArgv(*cmd, &spec.config.Cmd); err != nil {
		return fmt.Errorf("parse -cmd: %w", err)
	}
	var err error
	if spec.entries, err = parseEntries(files, dirs, links); err != nil {
		return err
	}

	digest, err := writeLayout(*out, &spec)
	if err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	// The manifest digest is what containerd reports as the image target, so
	// scripts compare it to skip an import that would change nothing.
	fmt.Println(digest)
	return nil
}

func parseArgv(s string, dst *[]string) error {
	if s == "" {
		return nil
	}
	return json.Unmarshal([]byte(s), dst)
}
