package volumes

import (
	"crypto/sha256"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podline/podline/internal/monotime"
)

// A token's iat and exp are the API server's wall-clock times. Compared
// with this node's clock on every pass, a clock set back an hour would
// hold a token's refresh for an hour, past its expiry for a one-hour
// token; the API server's clock, which decides expiry, was not set. So a
// token's life is put on the monotonic clock once, when podline first
// holds the token, and kept per pod until the pod is released:
//   - a token podline asked for counts its lifetime (exp − iat, both the
//     API server's) from just before it asked, which is no later than iat;
//   - a token found in the volume (written by an earlier run of podline)
//     can only be read against the wall clock, once.

// fetchedTokenLife returns the life of tok, just issued for pod uid in
// answer to a request made at asked, counted from asked, and remembers it
// in place of previous's.
func (s *Source) fetchedTokenLife(uid types.UID, previous, tok []byte, asked time.Time) (tokenLife, bool) {
	life, ok := readTokenLife(tok)
	if !ok {
		return life, false
	}
	life = tokenLife{
		issuedAt:  asked,
		refreshAt: asked.Add(life.refreshAt.Sub(life.issuedAt)),
		expiresAt: asked.Add(life.expiresAt.Sub(life.issuedAt)),
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.podLocked(uid)
	if len(previous) > 0 {
		delete(p.tokens, sha256.Sum256(previous))
	}
	p.tokens[sha256.Sum256(tok)] = life
	return life, true
}

// heldTokenLife returns the life of tok, the token in one of pod uid's
// volumes: as remembered, or read against the wall clock at now.
func (s *Source) heldTokenLife(uid types.UID, tok []byte, now time.Time) (tokenLife, bool) {
	if len(tok) == 0 {
		return tokenLife{}, false
	}
	sum := sha256.Sum256(tok)
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.podLocked(uid)
	if life, ok := p.tokens[sum]; ok {
		return life, true
	}
	life, ok := readTokenLife(tok)
	if !ok {
		return life, false
	}
	life = tokenLife{
		issuedAt:  monotime.Anchor(life.issuedAt, now),
		refreshAt: monotime.Anchor(life.refreshAt, now),
		expiresAt: monotime.Anchor(life.expiresAt, now),
	}
	p.tokens[sum] = life
	return life, true
}
