package auth

import "github.com/VictoriaMetrics/metrics"

// Authentication outcomes, by the method that settled them: a spike of
// "failed" is someone trying credentials, a spike of "none" someone
// probing the port.
var (
	authnX509      = metrics.NewCounter(`podline_server_authn_total{result="x509"}`)
	authnToken     = metrics.NewCounter(`podline_server_authn_total{result="token"}`)
	authnOther     = metrics.NewCounter(`podline_server_authn_total{result="other"}`)
	authnAnonymous = metrics.NewCounter(`podline_server_authn_total{result="anonymous"}`)
	authnNone      = metrics.NewCounter(`podline_server_authn_total{result="none"}`)
	authnFailed    = metrics.NewCounter(`podline_server_authn_total{result="failed"}`)
)

// Authorization outcomes of whole requests (after the fallback to proxy).
var (
	pathRefused    = metrics.NewCounter(`podline_server_authz_total{result="bad_path"}`)
	authzAllowed   = metrics.NewCounter(`podline_server_authz_total{result="allowed"}`)
	authzForbidden = metrics.NewCounter(`podline_server_authz_total{result="forbidden"}`)
	authzError     = metrics.NewCounter(`podline_server_authz_total{result="error"}`)
)

// API calls and cache hits: the caches exist to keep the apiserver's load
// from growing with the request rate, and these show whether they do.
var (
	tokenReviewsAuthenticated   = metrics.NewCounter(`podline_server_token_reviews_total{result="authenticated"}`)
	tokenReviewsUnauthenticated = metrics.NewCounter(`podline_server_token_reviews_total{result="unauthenticated"}`)
	tokenReviewsError           = metrics.NewCounter(`podline_server_token_reviews_total{result="error"}`)
	tokenReviewCacheHits        = metrics.NewCounter(`podline_server_token_review_cache_hits_total`)

	accessReviewsAllowed  = metrics.NewCounter(`podline_server_subject_access_reviews_total{result="allowed"}`)
	accessReviewsDenied   = metrics.NewCounter(`podline_server_subject_access_reviews_total{result="denied"}`)
	accessReviewsError    = metrics.NewCounter(`podline_server_subject_access_reviews_total{result="error"}`)
	accessReviewCacheHits = metrics.NewCounter(`podline_server_subject_access_review_cache_hits_total`)
)
