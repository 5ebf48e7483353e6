package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
)

// Filter authenticates and authorizes each request before next sees it,
// answering as the kubelet does:
//
//   - 401 "Unauthorized" when no user is established: no credentials (and
//     anonymous off), or credentials that failed;
//   - 403 "Forbidden (user=…, verb=…, resource=nodes, subresource(s)=[…])"
//     when the authorizer allows none of the request's questions;
//   - 500 "Authorization error (…)" when no decision could be had; the
//     cause goes to the log only, as it may describe the apiserver.
//
// The questions of RequestAttributes are asked in order and the first
// allowed one admits the request; an error on one does not stop the next,
// so a failing specific check still lets a granted proxy through. Next
// finds the user with UserFrom, and no longer sees the Authorization
// header: credentials stop at the edge.
//
// Every path of next is guarded; see the package doc for why nothing on
// the authenticated port is meant to be left outside.
func Filter(next http.Handler, authn Authenticator, authz Authorizer, nodeName string, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.Default()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// What is authorized must be what is routed. The router takes a
		// path as it comes (escapes included: %2E%2E is a segment to it),
		// so a path whose meaning depends on how it is cleaned or decoded
		// is refused, not interpreted: no valid name has dot segments,
		// empty segments or encoded slashes.
		if why := ambiguousPath(r); why != "" {
			pathRefused.Inc()
			http.Error(w, "Bad Request: "+why, http.StatusBadRequest)
			return
		}
		u, ok, err := authn.Authenticate(r)
		if err != nil || !ok {
			if err != nil {
				log.Info("authentication failed", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
			} else {
				log.Debug("no credentials", "remote", r.RemoteAddr, "path", r.URL.Path)
			}
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
			return
		}

		attrs := RequestAttributes(u, r, nodeName)
		subs := make([]string, len(attrs))
		for i, a := range attrs {
			subs[i] = a.Subresource
		}
		allowed, reasons, authzErr := decide(r, authz, attrs)
		switch {
		case allowed:
			authzAllowed.Inc()
		case authzErr != nil:
			authzError.Inc()
			log.Error("authorization failed", "user", u.Name, "verb", attrs[0].Verb, "subresources", subs, "path", attrs[0].Path, "err", authzErr)
			http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource(s)=%v)", u.Name, attrs[0].Verb, attrs[0].Resource, subs), http.StatusInternalServerError)
			return
		default:
			authzForbidden.Inc()
			log.Debug("forbidden", "user", u.Name, "verb", attrs[0].Verb, "subresources", subs, "path", attrs[0].Path, "reasons", reasons)
			http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)", u.Name, attrs[0].Verb, attrs[0].Resource, subs), http.StatusForbidden)
			return
		}

		r = r.WithContext(WithUser(r.Context(), u))
		if r.Header.Get("Authorization") != "" {
			r.Header = r.Header.Clone()
			r.Header.Del("Authorization")
		}
		next.ServeHTTP(w, r)
	})
}

// decide asks attrs in order until one is allowed. It returns the
// authorizer's reasons for refusals, for the log, and the errors met when
// nothing was allowed.
func decide(r *http.Request, authz Authorizer, attrs []Attributes) (bool, []string, error) {
	var reasons []string
	var errs []error
	for _, a := range attrs {
		ok, reason, err := authz.Authorize(r.Context(), a)
		if err != nil {
			errs = append(errs, fmt.Errorf("subresource %s: %w", a.Subresource, err))
			continue
		}
		if ok {
			return true, nil, nil
		}
		if reason != "" {
			reasons = append(reasons, reason)
		}
	}
	return false, reasons, errors.Join(errs...)
}

// ambiguousPath says why a request path could be read two ways, or "".
// The path is checked as sent (RawPath when set) and decoded.
func ambiguousPath(r *http.Request) string {
	raw := r.URL.EscapedPath()
	if strings.Contains(strings.ToLower(raw), "%2f") {
		return "encoded slash in the path"
	}
	segs := strings.Split(r.URL.Path, "/")
	for i, seg := range segs {
		switch {
		case seg == "." || seg == "..":
			return "dot segment in the path"
		case seg == "" && i != 0 && i != len(segs)-1:
			return "empty segment in the path"
		}
	}
	return ""
}
