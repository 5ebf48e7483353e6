package sources

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podline/podline/internal/redact"
)

const (
	// DefaultHTTPCheckPeriod is kubelet's --http-check-frequency default.
	DefaultHTTPCheckPeriod = 20 * time.Second
	// maxFetchTime bounds one GET so a hung server cannot stall the source
	// past its next period.
	maxFetchTime = 10 * time.Second
)

// URLSource is the HTTPSource: it fetches static pod manifests from a URL
// (kubelet's --manifest-url) every period. A failed fetch, a bad status or a
// bad manifest keeps the pods of the last good body; an empty body means no
// pods. Until a first good body arrives nothing is delivered, so the merger
// does not count the source as seen.
type URLSource struct {
	url string
	// shown is url as the log and errors show it, its credentials
	// redacted; url itself goes only into requests and the pods' UIDs.
	shown    string
	header   http.Header
	nodeName string
	period   time.Duration
	merger   *Merger
	log      *slog.Logger
	client   *http.Client

	mu      sync.Mutex
	lastErr error // guarded by mu

	// Owned by the goroutine that runs Run.
	lastBody [sha256.Size]byte
	bodyErr  error // why lastBody was not delivered; nil if it was
	fetched  bool  // lastBody is set
}

// NewURLSource makes a URL source sending header with every request;
// period <= 0 means DefaultHTTPCheckPeriod. merger must have HTTPSource
// registered.
func NewURLSource(url string, header http.Header, nodeName string, period time.Duration, merger *Merger, log *slog.Logger) *URLSource {
	if period <= 0 {
		period = DefaultHTTPCheckPeriod
	}
	return &URLSource{
		url: url, shown: redact.URL(url), header: header.Clone(), nodeName: nodeName, period: period, merger: merger,
		log:    log.With("source", HTTPSource),
		client: &http.Client{Timeout: min(period, maxFetchTime)},
	}
}

// Err returns the error of the last fetch, nil after a good one.
func (s *URLSource) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr
}

// Run fetches at once and then every period until ctx is done. A Set blocked
// on a lagging consumer is released by Merger.Close.
func (s *URLSource) Run(ctx context.Context) {
	ticker := time.NewTicker(s.period)
	defer ticker.Stop()
	for {
		s.sync(ctx)
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func (s *URLSource) sync(ctx context.Context) {
	httpFetches.Inc()
	body, err := s.fetch(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.fail(err)
		}
		return
	}
	// The same bytes decode to the same pods: skip the work. This also
	// keeps a known-bad body from being logged every period.
	sum := sha256.Sum256(body)
	if s.fetched && sum == s.lastBody {
		s.setErr(s.bodyErr)
		return
	}
	s.lastBody, s.fetched, s.bodyErr = sum, true, nil
	var pods []*v1.Pod
	if len(body) > 0 {
		if pods, err = loadStatic(body, HTTPSource, s.url, s.nodeName); err != nil {
			s.bodyErr = s.fail(err)
			return
		}
	}
	s.setErr(nil)
	s.merger.Set(HTTPSource, pods)
}

func (s *URLSource) fetch(ctx context.Context) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, s.fetchError(err)
	}
	req.Header = s.header.Clone()
	if host := s.header.Get("Host"); host != "" {
		req.Host = host // net/http ignores a Host entry in Header
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, s.fetchError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4096)) // lets the connection be reused
		return nil, newClassError(ErrFetch, "status "+resp.Status, nil)
	}
	if resp.ContentLength > maxManifestBytes {
		// Not read, not drained: the connection goes with the body.
		return nil, errTooLarge("body", resp.ContentLength)
	}
	var buf bytes.Buffer
	if resp.ContentLength > 0 {
		buf.Grow(int(resp.ContentLength) + bytes.MinRead) // one allocation, not a doubling series
	}
	if _, err := buf.ReadFrom(io.LimitReader(resp.Body, maxManifestBytes+1)); err != nil {
		return nil, s.fetchError(err)
	}
	if buf.Len() > maxManifestBytes {
		return nil, errTooLarge("body", 0)
	}
	return buf.Bytes(), nil
}

// fetchError is a failed request as an ErrFetch, without the credentials
// net/http's client errors show: they carry the URL (the manifest URL or
// a redirect's) with its user and query.
func (s *URLSource) fetchError(err error) error {
	err = redact.Error(err, s.url)
	return newClassError(ErrFetch, err.Error(), err)
}

// fail keeps the current pods and reports why, with the URL (redacted)
// and the field. An error repeating every period is logged at error level
// only once.
func (s *URLSource) fail(err error) error {
	err = fmt.Errorf("%s: %w", s.shown, redact.Error(err, s.url))
	httpManifestErrors.Inc()
	level := slog.LevelError
	if prev := s.Err(); prev != nil && prev.Error() == err.Error() {
		level = slog.LevelDebug
	}
	s.log.Log(context.Background(), level, "bad pod manifest URL; keeping the pods it defined before", "url", s.shown, "err", err)
	s.setErr(err)
	return err
}

func (s *URLSource) setErr(err error) {
	s.mu.Lock()
	s.lastErr = err
	s.mu.Unlock()
}
