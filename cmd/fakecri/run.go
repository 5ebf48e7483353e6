package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/podline/podline/cri/fake"
)

// run serves the fake runtime as args say until ctx ends, then closes every
// connection and removes its socket files.
func run(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, err := parseArgs(args, stderr)
	if err != nil {
		return err
	}
	srv := fake.New(cfg.opts)
	stop, err := srv.Start(cfg.listen)
	if err != nil {
		return fmt.Errorf("serve CRI on %s: %w", cfg.listen, err)
	}
	defer os.Remove(cfg.listen)
	defer stop()

	controlNote := ""
	if cfg.control != "" {
		l, cleanup, err := listenControl(cfg.control)
		if err != nil {
			return fmt.Errorf("control listener on %s: %w", cfg.control, err)
		}
		defer cleanup()
		hs := &http.Server{Handler: controlHandler(srv), ReadHeaderTimeout: 5 * time.Second}
		served := make(chan error, 1)
		go func() { served <- hs.Serve(l) }()
		defer func() {
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			hs.Shutdown(sctx)
			if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
				fmt.Fprintf(stderr, "fakecri: control listener: %v\n", err)
			}
		}()
		controlNote = ", control on " + l.Addr().String()
	}

	fmt.Fprintf(stderr, "fakecri: serving CRI on unix://%s%s; latency %s\n", cfg.listen, controlNote, cfg.describeLatency())
	<-ctx.Done()
	return nil
}
