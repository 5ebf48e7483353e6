package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/podline/podline/cri/fake"
)

// The control listener lets a benchmark steer the fake from outside:
//
//	POST /exit?container=<id>&code=<n>  the running container exits now (code 0 by default)
//	GET  /calls                         JSON object: CRI method → calls so far
//	GET  /hung                          calls blocked by --hang so far (a number)
//	GET  /healthz                       "ok"
func controlHandler(srv *fake.Server) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /exit", func(w http.ResponseWriter, r *http.Request) {
		id := r.URL.Query().Get("container")
		if id == "" {
			http.Error(w, "container=<id> is required", http.StatusBadRequest)
			return
		}
		code := int64(0)
		if s := r.URL.Query().Get("code"); s != "" {
			var err error
			if code, err = strconv.ParseInt(s, 10, 32); err != nil {
				http.Error(w, fmt.Sprintf("code=%q is not an exit code", s), http.StatusBadRequest)
				return
			}
		}
		switch err := srv.ExitContainer(id, int32(code)); {
		case errors.Is(err, fake.ErrNoContainer):
			http.Error(w, err.Error(), http.StatusNotFound)
		case errors.Is(err, fake.ErrNotRunning):
			http.Error(w, err.Error(), http.StatusConflict)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("GET /calls", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(srv.CallCounts())
	})
	mux.HandleFunc("GET /hung", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, srv.HungCalls())
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// listenControl listens on addr: a unix socket when it looks like a path
// (it contains a slash; a stale socket is replaced), TCP otherwise.
// cleanup removes the socket file, if any, once the listener is closed.
func listenControl(addr string) (l net.Listener, cleanup func(), err error) {
	if !strings.Contains(addr, "/") {
		l, err = net.Listen("tcp", addr)
		return l, func() {}, err
	}
	if fi, err := os.Lstat(addr); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, nil, fmt.Errorf("control %s exists and is not a socket", addr)
		}
		if err := os.Remove(addr); err != nil {
			return nil, nil, fmt.Errorf("remove stale control socket: %w", err)
		}
	}
	l, err = net.Listen("unix", addr)
	return l, func() { os.Remove(addr) }, err
}
