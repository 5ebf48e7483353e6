// Command podline is the node agent. Everything it is made of is wired here,
// explicitly: see agent.go for the order things start in.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// version is podline's; the Makefile stamps it with -ldflags. The Node
// reports it as its kubelet version, so it is a semantic version.
var version = "v0.6.0-dev"

func main() {
	applyGCPolicy()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	code := run(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}

// run is podline until ctx ends; it returns the exit code.
func run(ctx context.Context, args []string) int {
	var o options
	fs := newFlagSet(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if o.version {
		fmt.Println("podline", version)
		return 0
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "podline: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	if err := o.validate(); err != nil {
		fmt.Fprintf(os.Stderr, "podline: %v\n", err)
		return 2
	}
	if err := o.loadManifestSecrets(); err != nil {
		fmt.Fprintf(os.Stderr, "podline: %v\n", err)
		return 2
	}
	if err := o.absolutePaths(); err != nil {
		fmt.Fprintf(os.Stderr, "podline: %v\n", err)
		return 2
	}
	o.flagValues = map[string]string{}
	fs.VisitAll(func(f *flag.Flag) { o.flagValues[f.Name] = f.Value.String() })
	o.cmdline = redactedArgs(fs, os.Args[0], args)
	level := slog.LevelInfo
	if o.verbosity >= 4 {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	o.warnArgvSecrets(log)

	a, err := newAgent(ctx, &o, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	if err := a.run(ctx); err != nil {
		log.Error("stopped", "err", err)
		return 1
	}
	log.Info("stopped; pods keep running and are adopted at the next start")
	return 0
}
