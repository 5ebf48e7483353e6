package fake

import (
	"fmt"
	"net/netip"
)

// DefaultPodSubnet is where pod addresses come from unless
// Options.PodSubnet says otherwise.
const DefaultPodSubnet = "10.88.0.0/16"

// ipPool hands out pod addresses from an IPv4 /16, 10.88.0.0/16 by default
// (.0.1 is the bridge). Like CNI host-local it moves on after each
// allocation instead of reusing the address just freed, so a stale status
// naming an old IP is rarely mistaken for a new pod's.
type ipPool struct {
	prefix [2]byte // the /16's first two octets
	used   map[uint16]struct{}
	next   uint16
}

const (
	firstHost = 2
	lastHost  = 0xfffe // x.y.255.255 is broadcast
)

// ParsePodSubnet checks that s is an IPv4 /16 ("" is DefaultPodSubnet) and
// returns it in canonical form.
func ParsePodSubnet(s string) (netip.Prefix, error) {
	if s == "" {
		s = DefaultPodSubnet
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	if !p.Addr().Is4() || p.Bits() != 16 {
		return netip.Prefix{}, fmt.Errorf("pod subnet %s is not an IPv4 /16", s)
	}
	return p.Masked(), nil
}

// newIPPool returns a pool over subnet; a subnet ParsePodSubnet refuses
// falls back to the default (New has no error to return: the command line
// checks it first).
func newIPPool(subnet string) ipPool {
	p, err := ParsePodSubnet(subnet)
	if err != nil {
		p, _ = ParsePodSubnet("")
	}
	a := p.Addr().As4()
	return ipPool{prefix: [2]byte{a[0], a[1]}, used: make(map[uint16]struct{}), next: firstHost}
}

func (p *ipPool) subnet() string {
	return fmt.Sprintf("%d.%d.0.0/16", p.prefix[0], p.prefix[1])
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
		return h, fmt.Sprintf("%d.%d.%d.%d", p.prefix[0], p.prefix[1], h>>8, h&0xff), true
	}
	return 0, "", false
}

func (p *ipPool) release(host uint16) {
	delete(p.used, host)
}
