package ratelimit

import (
	"net/netip"
	"strings"
	"testing"
)

// The address a request is counted under: the peer unless it is a
// trusted proxy; behind trusted proxies the rightmost forwarded address
// that is not one of them.
func TestClient_AddressBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	trusted, err := ParseProxies("10.0.0.0/8, 192.0.2.1 2001:db8::/32,::ffff:172.16.0.0/108")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		proxies   Proxies
		remote    string
		forwarded []string
		want      string
	}{
		{"no proxies: the peer", nil, "198.51.100.1:1234", []string{"203.0.113.1"}, "198.51.100.1"},
		{"untrusted peer: header ignored", trusted, "198.51.100.1:1234", []string{"203.0.113.1"}, "198.51.100.1"},
		{"trusted peer without the header", trusted, "10.0.0.1:80", nil, "10.0.0.1"},
		{"trusted peer, one hop", trusted, "10.0.0.1:80", []string{"203.0.113.1"}, "203.0.113.1"},
		{"prepended addresses are the client's claim", trusted, "10.0.0.1:80", []string{"1.1.1.1, 2.2.2.2, 203.0.113.1"}, "203.0.113.1"},
		{"through two trusted hops", trusted, "10.0.0.1:80", []string{"1.1.1.1, 203.0.113.1, 192.0.2.1, 10.9.9.9"}, "203.0.113.1"},
		{"several header lines, in order", trusted, "10.0.0.1:80", []string{"1.1.1.1", "203.0.113.1", "10.2.3.4"}, "203.0.113.1"},
		{"every hop trusted: the leftmost", trusted, "10.0.0.1:80", []string{"10.3.3.3, 192.0.2.1"}, "10.3.3.3"},
		{"garbage at the right: the last trusted hop", trusted, "10.0.0.1:80", []string{"203.0.113.1, nonsense"}, "10.0.0.1"},
		{"garbage behind a trusted hop", trusted, "10.0.0.1:80", []string{"nonsense, 192.0.2.1"}, "192.0.2.1"},
		{"garbage left of the client is not read", trusted, "10.0.0.1:80", []string{"nonsense, 203.0.113.1"}, "203.0.113.1"},
		{"empty entries skipped", trusted, "10.0.0.1:80", []string{" , 203.0.113.1 ,, ", ""}, "203.0.113.1"},
		{"a port is dropped", trusted, "10.0.0.1:80", []string{"203.0.113.1:5555"}, "203.0.113.1"},
		{"IPv6 with port", trusted, "[2001:db8::1]:443", []string{"[2001:DB8:1::5]:443, 2001:db8::2"}, "2001:db8:1::5"},
		{"IPv6 client canonical", trusted, "[2001:db8::1]:443", []string{"2a00:0000::0001"}, "2a00::1"},
		{"zone dropped", trusted, "10.0.0.1:80", []string{"fe80::1%eth0"}, "fe80::1"},
		{"IPv4-mapped peer trusted as IPv4", trusted, "[::ffff:10.0.0.1]:80", []string{"203.0.113.1"}, "203.0.113.1"},
		{"IPv4-mapped client as IPv4", trusted, "10.0.0.1:80", []string{"::ffff:203.0.113.1"}, "203.0.113.1"},
		{"mapped CIDR covers IPv4", trusted, "172.16.1.1:80", []string{"203.0.113.1"}, "203.0.113.1"},
		{"peer without a port", trusted, "10.0.0.1", []string{"203.0.113.1"}, "203.0.113.1"},
		{"peer that is no address", trusted, "pipe", []string{"203.0.113.1"}, "pipe"},
	}
	for _, c := range cases {
		if got := c.proxies.Client(c.remote, c.forwarded); got != c.want {
			t.Errorf("%s: %q", c.name, got)
		}
	}
}

// TRUSTED_PROXIES' syntax: CIDRs and addresses; anything else refused.
func TestParseProxies(t *testing.T) {
	t.Parallel()
	ps, err := ParseProxies(" 10.0.0.0/8,192.0.2.7 ,2001:db8::/32\t::ffff:10.0.0.0/104 ")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32", "10.0.0.0/8"}
	if len(ps) != len(want) {
		t.Fatalf("%v", ps)
	}
	for i, p := range ps {
		if p.String() != want[i] {
			t.Fatalf("%d: %v, want %s", i, p, want[i])
		}
	}
	if ps, err := ParseProxies(""); err != nil || ps != nil {
		t.Fatalf("empty: %v %v", ps, err)
	}
	for _, bad := range []string{"10.0.0.0/33", "10.0.0", "localhost", "fe80::1%eth0", "10.0.0.0/8/8", "*"} {
		if _, err := ParseProxies(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

// FuzzForwardedFor: whatever the header holds, the address chosen is a
// canonical IP (one client, one bucket name) that is the peer or one of
// the forwarded hops, and the peer when the peer is not trusted.
func FuzzForwardedFor(f *testing.F) {
	for _, s := range []string{"", "203.0.113.1", "1.1.1.1, 10.0.0.2", "[2001:db8::1]:80, garbage", ",,,", "fe80::1%eth0, ::ffff:1.2.3.4:80",
		strings.Repeat("10.0.0.1,", 100)} {
		f.Add(s, "10.0.0.1:80")
		f.Add(s, "198.51.100.1:80")
	}
	trusted, _ := ParseProxies("10.0.0.0/8, 2001:db8::/32")
	f.Fuzz(func(t *testing.T, header, remote string) {
		got := trusted.Client(remote, strings.Split(header, "\n"))
		peer, ok := parseHop(remote)
		if !ok {
			return // not an address: passed through as before
		}
		a, err := netip.ParseAddr(got)
		if err != nil || a.String() != got || a.Zone() != "" || a.Is4In6() {
			t.Fatalf("Client(%q, %q) = %q: not a canonical address", remote, header, got)
		}
		if !trusted.trusted(peer) {
			if got != peer.String() {
				t.Fatalf("untrusted peer %q: %q", remote, got)
			}
			return
		}
		if got == peer.String() {
			return
		}
		found := false
		for _, hop := range strings.FieldsFunc(header, func(r rune) bool { return r == ',' || r == '\n' }) {
			if h, ok := parseHop(strings.TrimSpace(hop)); ok && h.String() == got {
				found = true
			}
		}
		if !found {
			t.Fatalf("Client(%q, %q) = %q: neither the peer nor a hop", remote, header, got)
		}
	})
}
