package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Limits every server keeps: a slow or idle client cannot hold a
// connection or a goroutine forever, and a request cannot be huge.
const (
	readHeaderTimeout = 10 * time.Second
	idleTimeout       = 2 * time.Minute
	maxHeaderBytes    = 64 << 10
	// answerTimeout bounds reading a request and writing an answer.
	// Streams (exec, attach, port-forward, followed logs) lift it for
	// themselves: they last as long as the session.
	answerTimeout = 2 * time.Minute
	// maxBodyBytes bounds a request body: no endpoint takes more than
	// a few query parameters.
	maxBodyBytes = 1 << 20
)

// Serve listens on addr and serves h until ctx ends. It returns once the
// listener is up (or failed), so callers learn of a busy port at start.
// With tlsCfg set it serves HTTPS.
func Serve(ctx context.Context, addr string, h http.Handler, tlsCfg *tls.Config, log *slog.Logger) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{
		Handler:           limit(h),
		ReadHeaderTimeout: readHeaderTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		TLSConfig:         tlsCfg,
		// HTTP/1.1 only: streams upgrade HTTP/1.1 connections, and the
		// kubelet's port offers nothing else.
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){},
		ErrorLog:     slog.NewLogLogger(log.Handler(), slog.LevelDebug),
	}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	go func() {
		var err error
		if tlsCfg != nil {
			err = srv.ServeTLS(l, "", "")
		} else {
			err = srv.Serve(l)
		}
		if err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server stopped", "addr", addr, "err", err)
		}
	}()
	log.Info("serving", "addr", l.Addr().String(), "tls", tlsCfg != nil)
	return nil
}

// limit gives every request a deadline to be read and answered by, and
// caps its body.
func limit(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		deadline := time.Now().Add(answerTimeout)
		_ = rc.SetReadDeadline(deadline)
		_ = rc.SetWriteDeadline(deadline)
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
		}
		h.ServeHTTP(w, r)
	})
}

// progressing lets an answer take as long as it keeps moving (a large log,
// a followed one, a profile of many seconds): each write pushes the write
// deadline answerTimeout further, so only a client that stops reading for
// that long is cut off.
func progressing(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Time{})
		// Idle between writes is fine (a follower waits for lines): the
		// deadline is set for each write, not for the answer.
		_ = rc.SetWriteDeadline(time.Time{})
		h.ServeHTTP(&progressWriter{ResponseWriter: w, rc: rc}, r)
	})
}

type progressWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (p *progressWriter) Write(b []byte) (int, error) {
	_ = p.rc.SetWriteDeadline(time.Now().Add(answerTimeout))
	return p.ResponseWriter.Write(b)
}

func (p *progressWriter) Flush() {
	_ = p.rc.SetWriteDeadline(time.Now().Add(answerTimeout))
	_ = p.rc.Flush()
}

// Unwrap gives http.ResponseController the writer underneath.
func (p *progressWriter) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// lift removes the answer deadline of a request that becomes a stream.
func lift(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}
