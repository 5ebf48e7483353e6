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
)

// token returns the token for a serviceAccountToken projection: previous
// (the token already in the volume) while it is fresh, else a new one.
// Reusing it keeps a repeated setup from rewriting the volume and from
// asking the API server for a token per sync; it is safe because the
// token is bound to this pod's UID and a pod's volumes cannot change.
func (s *Source) token(ctx context.Context, pod *v1.Pod, proj *v1.ServiceAccountTokenProjection, previous []byte) ([]byte, error) {
	if previous != nil && tokenFresh(previous, s.now()) {
		return previous, nil
	}
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

// tokenFresh reads the iat and exp claims of a JWT without verifying it
// (podline only decides whether to ask for a new one) and reports whether
// the token is still young enough to keep. Anything unreadable is stale.
func tokenFresh(token []byte, now time.Time) bool {
	parts := strings.Split(string(token), ".")
	if len(parts) != 3 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var claims struct {
		IssuedAt  int64 `json:"iat"`
		ExpiresAt int64 `json:"exp"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil || claims.IssuedAt == 0 || claims.ExpiresAt <= claims.IssuedAt {
		return false
	}
	iat, exp := time.Unix(claims.IssuedAt, 0), time.Unix(claims.ExpiresAt, 0)
	keep := exp.Sub(iat) * tokenRefreshPercent / 100
	keep = min(keep, tokenMaxAge)
	return now.Before(iat.Add(keep))
}
