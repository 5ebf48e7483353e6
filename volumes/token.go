package volumes

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	authv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	// defaultTokenSeconds is the API server's default for a projection's
	// expirationSeconds; pods from files may leave it unset.
	defaultTokenSeconds = 3600
	// A token is replaced once 80% of its lifetime has passed or it is a
	// day old, whichever comes first, so it is never used near expiry.
	tokenRefreshPercent = 80
	tokenMaxAge         = 24 * time.Hour
	// tokenRetry is how soon a failed refresh is tried again while the
	// token in the volume is still valid.
	tokenRetry = 30 * time.Second
)

// token returns the token for a serviceAccountToken projection: previous
// (the token already in the volume) while it is fresh, else a new one, and
// sets the pod's token timer for when the one returned is due. Reusing it
// keeps a repeated setup from rewriting the volume and from asking the API
// server for a token per sync; it is safe because the token is bound to
// this pod's UID and a pod's volumes cannot change.
func (s *Source) token(ctx context.Context, pod *v1.Pod, proj *v1.ServiceAccountTokenProjection, previous []byte) ([]byte, error) {
	if s.client == nil {
		return nil, fmt.Errorf("serviceAccountToken %q: %w", proj.Path, ErrNoAPIServer)
	}
	now := s.now()
	old, oldOK := s.heldTokenLife(pod.UID, previous, now)
	if oldOK && now.Before(old.refreshAt) {
		s.tokenDueIn(pod.UID, old.refreshAt.Sub(now))
		return previous, nil
	}
	tok, err := s.requestToken(ctx, pod, proj)
	if err != nil {
		// As on other nodes, a token that has not expired serves on while
		// its refresh is retried: a short API server outage must not take
		// a running pod's credentials away.
		if oldOK && now.Before(old.expiresAt) {
			s.tokenDueIn(pod.UID, tokenRetry)
			return previous, nil
		}
		return nil, err
	}
	if life, ok := s.fetchedTokenLife(pod.UID, previous, tok, now); ok {
		s.tokenDueIn(pod.UID, life.refreshAt.Sub(now))
	}
	return tok, nil
}

// requestToken asks the API server for a token bound to the pod.
func (s *Source) requestToken(ctx context.Context, pod *v1.Pod, proj *v1.ServiceAccountTokenProjection) ([]byte, error) {
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	seconds := int64(defaultTokenSeconds)
	if proj.ExpirationSeconds != nil {
		seconds = *proj.ExpirationSeconds
	}
	var audiences []string
	if proj.Audience != "" {
		audiences = []string{proj.Audience}
	}
	// The Node authorizer lets a node ask for tokens only for service
	// accounts of pods bound to it, and only bound to such a pod.
	req := &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{
		Audiences:         audiences,
		ExpirationSeconds: &seconds,
		BoundObjectRef: &authv1.BoundObjectReference{
			Kind:       "Pod",
			APIVersion: "v1",
			Name:       pod.Name,
			UID:        pod.UID,
		},
	}}
	tr, err := s.client.CoreV1().ServiceAccounts(pod.Namespace).CreateToken(ctx, sa, req, metav1.CreateOptions{})
	if err == nil && tr.Status.Token == "" {
		err = fmt.Errorf("%w: the API server returned an empty token", ErrInvalid)
	}
	if err != nil {
		tokenRequestsFailed.Inc()
		return nil, fmt.Errorf("token for service account %q in namespace %q: %w", sa, pod.Namespace, err)
	}
	tokenRequestsOK.Inc()
	return []byte(tr.Status.Token), nil
}

// tokenLife is when a token was issued, when it is due for refresh and
// when it stops working.
type tokenLife struct {
	issuedAt, refreshAt, expiresAt time.Time
}

// readTokenLife reads the iat, exp and kubernetes.io warnafter claims of a
// JWT without verifying it: podline only decides when to ask for a new
// one. The API server may extend a kube-api-access token's exp to a year
// for clients that never reread it, and then sets warnafter to the
// lifetime that was asked for; that lifetime is the one refreshed by.
// Anything unreadable has no life to keep.
func readTokenLife(token []byte) (tokenLife, bool) {
	parts := strings.Split(string(token), ".")
	if len(parts) != 3 {
		return tokenLife{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return tokenLife{}, false
	}
	var claims struct {
		IssuedAt   int64 `json:"iat"`
		ExpiresAt  int64 `json:"exp"`
		Kubernetes struct {
			WarnAfter int64 `json:"warnafter"`
		} `json:"kubernetes.io"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil || claims.IssuedAt == 0 || claims.ExpiresAt <= claims.IssuedAt {
		return tokenLife{}, false
	}
	life := tokenLife{issuedAt: time.Unix(claims.IssuedAt, 0), expiresAt: time.Unix(claims.ExpiresAt, 0)}
	end := life.expiresAt
	if w := claims.Kubernetes.WarnAfter; w > claims.IssuedAt && w < claims.ExpiresAt {
		end = time.Unix(w, 0)
	}
	// Divided before multiplied: a lifetime of years (expirationSeconds
	// allows 2^32) times 80 overflows a Duration, which put the refresh
	// before iat and asked for a new token every second.
	keep := min(end.Sub(life.issuedAt)/100*tokenRefreshPercent, tokenMaxAge)
	life.refreshAt = life.issuedAt.Add(keep)
	return life, true
}

// tokenFresh reports whether token may be kept at now.
func tokenFresh(token []byte, now time.Time) bool {
	life, ok := readTokenLife(token)
	return ok && now.Before(life.refreshAt)
}
