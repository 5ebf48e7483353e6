package fake

import "fmt"

// ipPool hands out pod addresses from 10.88.0.0/16 (10.88.0.1 is the
// bridge). Like CNI host-local it moves on after each allocation instead of
// reusing the address just freed, so a stale status naming an old IP is
// rarely mistaken for a new pod's.
type ipPool struct {
	used map[uint16]struct{}
	next uint16
}

const (
	firstHost = 2
	lastHost  = 0xfffe // 10.88.255.255 is broadcast
)

func newIPPool() ipPool {
	return ipPool{used: make(map[uint16]struct{}), next: firstHost}
}

// take returns a free host part and its address; ok is false when all
// 65,533 addresses are in use.
func (p *ipPool) take() (host uint16, ip string, ok bool) {
	for range lastHost - firstHost + 1 {
		h := p.next
		p.next++
		if p.next > lastHost {
			p.next = firstHost
		}
		if _, busy := p.used[h]; busy {
			continue
		}
		p.used[h] = struct{}{}
		return h, fmt.Sprintf("10.88.%d.%d", h>>8, h&0xff), true
	}
	return 0, "", false
}

func (p *ipPool) release(host uint16) {
	delete(p.used, host)
}
