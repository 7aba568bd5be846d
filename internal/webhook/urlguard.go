package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrForbiddenAddress refuses a webhook URL that is, or resolves to, an
// address inside a private network (SSRF).
var ErrForbiddenAddress = errors.New("webhook URLs must reach a public address")

// blocked are the ranges no live account's webhook may reach: this host,
// private networks, link-local (cloud metadata sits at 169.254.169.254),
// carrier-grade NAT and other special-purpose ranges. The IPv6 forms that
// embed an IPv4 address are refused whole, whatever address they carry:
// IPv4-compatible (::/96, deprecated), IPv4-translated (::ffff:0:0:0/96),
// NAT64 (64:ff9b::/96, 64:ff9b:1::/48), Teredo (2001::/32, in 2001::/23)
// and 6to4 (2002::/16, deprecated): a host or relay that unwraps them may
// deliver to the private IPv4 inside. IPv4-mapped addresses (::ffff:0:0/96)
// are unmapped and checked as IPv4.
var blocked = func() []netip.Prefix {
	var ps []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.0.2.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
		"203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4",
		"::/96", "::ffff:0:0:0/96", "2002::/16", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64", "2001::/23", "2001:db8::/32",
		"fc00::/7", "fe80::/10", "ff00::/8",
	} {
		ps = append(ps, netip.MustParsePrefix(s))
	}
	return ps
}()

// PublicAddress reports whether ip is outside every blocked range.
func PublicAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.Zone() != "" {
		// A zoned address is link-local by nature, and prefixes never
		// contain it: refuse it outright.
		return false
	}
	for _, p := range blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// CheckURL vets an endpoint URL at save time: a live account's URL must be
// https and its host must resolve only to public addresses; allowPrivate
// (test accounts, when configured) skips the address check. The check is
// repeated at connect time (see Client), since a name may later resolve
// elsewhere.
func CheckURL(ctx context.Context, rawURL string, live, allowPrivate bool) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Hostname() == "" {
		return &FieldError{"url", "must be an absolute http(s) URL"}
	}
	if live && u.Scheme != "https" {
		return &FieldError{"url", "must be an https URL for a live account"}
	}
	if allowPrivate && !live {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if ip, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{ip}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		addrs, err = net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			return &FieldError{"url", fmt.Sprintf("host %q does not resolve", host)}
		}
	}
	for _, ip := range addrs {
		if !PublicAddress(ip) {
			return &FieldError{"url", fmt.Sprintf("%s resolves to %s, a private or reserved address; webhooks must reach a public address", host, ip)}
		}
	}
	return nil
}

// Client is the HTTP client of deliveries: no proxy, no redirects, Timeout
// per attempt, and, unless allowPrivate, a dialer that refuses to connect
// to anything but a public address (checked on the address actually
// dialled, after name resolution, so a name re-pointed at a private
// address is refused too).
func Client(allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil || !PublicAddress(ap.Addr()) {
				return fmt.Errorf("%w: %s", ErrForbiddenAddress, address)
			}
			return nil
		}
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          200,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: Timeout,
	}
	return &http.Client{
		Timeout:       Timeout,
		Transport:     t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
