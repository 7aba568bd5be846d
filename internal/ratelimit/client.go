package ratelimit

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Proxies are the reverse proxies whose X-Forwarded-For is believed when
// choosing the address a request without a key is counted under. The
// zero value trusts no proxy: every request is its TCP peer's.
type Proxies []netip.Prefix

// ParseProxies reads a comma- or space-separated list of CIDRs and single
// addresses ("10.0.0.0/8, 192.0.2.7"); "" is no proxy.
func ParseProxies(s string) (Proxies, error) {
	var ps Proxies
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil || p.Addr().Zone() != "" {
				return nil, fmt.Errorf("%q is not a CIDR like 10.0.0.0/8", f)
			}
			ps = append(ps, unmapPrefix(p).Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("%q is not an IP address or a CIDR", f)
		}
		a = a.Unmap()
		ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
	}
	return ps, nil
}

// unmapPrefix turns ::ffff:10.0.0.0/104 into 10.0.0.0/8, so an IPv4 range
// written either way matches IPv4 peers.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

func (ps Proxies) trusted(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Client is the address a request is counted under: its TCP peer (remote,
// host:port), or, when the peer is a trusted proxy, the rightmost address
// of X-Forwarded-For (forwarded, the header's lines in order) that is not
// a trusted proxy.
//
// Rightmost, because each proxy appends the address it was connected
// from: the entries our own proxies appended are at the right end and
// true, everything left of them is whatever the client chose to send. The
// first untrusted entry from the right is who connected to our outermost
// proxy, which a client cannot forge; the leftmost entry would give every
// client a fresh bucket per request. An entry that is not an address
// stops the walk at the last trusted hop (a client must not pick its own
// bucket name), and when every entry is a trusted proxy the leftmost of
// them is the client.
func (ps Proxies) Client(remote string, forwarded []string) string {
	peer, ok := parseHop(remote)
	if !ok {
		// Not host:port (a test's or a unix socket's address): as is.
		if host, _, err := net.SplitHostPort(remote); err == nil {
			return host
		}
		return remote
	}
	if len(ps) == 0 || !ps.trusted(peer) {
		return peer.String()
	}
	client := peer
	for i := len(forwarded) - 1; i >= 0; i-- {
		line := forwarded[i]
		for {
			var hop string
			if j := strings.LastIndexByte(line, ','); j >= 0 {
				line, hop = line[:j], line[j+1:]
			} else {
				line, hop = "", line
			}
			hop = strings.TrimSpace(hop)
			if hop != "" {
				a, ok := parseHop(hop)
				if !ok {
					return client.String()
				}
				client = a
				if !ps.trusted(a) {
					return a.String()
				}
			}
			if line == "" {
				break
			}
		}
	}
	return client.String()
}

// parseHop reads one hop: an address, optionally with a port ("1.2.3.4",
// "1.2.3.4:80", "2001:db8::1", "[2001:db8::1]:443"), without its zone and
// with IPv4-mapped IPv6 as IPv4, so one client has one spelling.
func parseHop(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return netip.Addr{}, false
		}
		a = ap.Addr()
	}
	return a.WithZone("").Unmap(), true
}
