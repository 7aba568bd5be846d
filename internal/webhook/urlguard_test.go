package webhook_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentwallet/agentwallet/internal/webhook"
)

func TestPublicAddress(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ip     string
		public bool
	}{
		{"8.8.8.8", true}, {"1.1.1.1", true}, {"2606:4700:4700::1111", true},
		{"127.0.0.1", false}, {"127.9.9.9", false}, {"::1", false}, {"0.0.0.0", false}, {"::", false},
		{"10.1.2.3", false}, {"172.16.0.1", false}, {"172.31.255.255", false}, {"192.168.1.1", false},
		{"169.254.169.254", false}, {"100.64.0.1", false}, {"100.127.255.255", false}, {"fd00::1", false}, {"fe80::1", false},
		{"::ffff:127.0.0.1", false}, {"::ffff:10.0.0.1", false}, {"224.0.0.1", false}, {"255.255.255.255", false},
		{"172.32.0.1", true}, {"100.128.0.1", true},
		{"::1%lo", false}, {"fe80::1%eth0", false}, {"2606:4700:4700::1111%eth0", false},
	} {
		if got := webhook.PublicAddress(netip.MustParseAddr(c.ip)); got != c.public {
			t.Errorf("%s: public %v, want %v", c.ip, got, c.public)
		}
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		url                string
		live, allowPrivate bool
		ok                 bool
	}{
		{"https://8.8.8.8/hook", true, false, true},
		{"http://8.8.8.8/hook", true, false, false},            // live needs https
		{"https://127.0.0.1/hook", true, true, false},          // live never reaches private
		{"https://localhost/hook", true, false, false},         // a name resolving to 127.0.0.1
		{"https://[::1]:8443/hook", true, false, false},        // IPv6 loopback
		{"https://169.254.169.254/latest", true, false, false}, // metadata
		{"http://127.0.0.1:9/hook", false, false, false},       // test account, private not allowed
		{"http://127.0.0.1:9/hook", false, true, true},         // test account, allowed by configuration
		{"https://no-such-host.invalid/hook", true, false, false},
		{"https://[::1%25lo]/x", true, false, false},         // zoned loopback
		{"https://[fe80::1%25eth0]/x", true, false, false},   // zoned link-local
		{"http://[::1%25lo]:9/x", false, false, false},       // a test account without private access
		{"https://[::ffff:127.0.0.1]/x", true, false, false}, // IPv4-mapped loopback
		{"https://0x7f000001/x", true, false, false},         // hex form: does not resolve, refused
		{"https://2130706433/x", true, false, false},         // decimal form: not an address Go dials as one
	} {
		err := webhook.CheckURL(ctx, c.url, c.live, c.allowPrivate)
		if (err == nil) != c.ok {
			t.Errorf("%s (live %v, private %v): %v", c.url, c.live, c.allowPrivate, err)
		}
	}
}

// The delivery client refuses to connect to a private address even when
// the URL passed the save-time check (a name re-pointed later).
func TestClientRefusesPrivateAtConnect(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached.Add(1) }))
	defer srv.Close()
	_, err := webhook.Client(false).Get(srv.URL)
	if !errors.Is(err, webhook.ErrForbiddenAddress) || reached.Load() != 0 {
		t.Fatalf("err %v, reached %d", err, reached.Load())
	}
	resp, err := webhook.Client(true).Get(srv.URL)
	if err != nil {
		t.Fatalf("allowed client: %v", err)
	}
	resp.Body.Close()
	if reached.Load() != 1 {
		t.Fatalf("reached %d", reached.Load())
	}
}

// A failed POST's error names only the scheme and host: a Slack webhook
// URL's token is in its path.
func TestRedactURL(t *testing.T) {
	t.Parallel()
	raw := "https://hooks.slack.com/services/T0/B0/secret-token?x=1"
	req, _ := http.NewRequest("POST", raw, nil)
	_, err := webhook.Client(false).Do(req.WithContext(canceled()))
	msg := webhook.RedactURL(err, raw, req.URL)
	if strings.Contains(msg, "secret-token") || strings.Contains(msg, "x=1") || !strings.HasPrefix(msg, "https://hooks.slack.com: ") {
		t.Fatalf("%q", msg)
	}
}

func canceled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// The IPv6 forms that embed an IPv4 address are refused whole (a relay or
// host that unwraps them could reach the private address inside): 6to4,
// IPv4-compatible, IPv4-translated, NAT64 and Teredo; mapped addresses are
// checked as the IPv4 they are. Ordinary global IPv6 stays allowed.
func TestCheckURL_RefusesEmbeddedIPv4(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ip, form string
		public   bool
	}{
		{"2002:7f00:1::1", "6to4 of 127.0.0.1", false},
		{"2002:a00:1::", "6to4 of 10.0.0.1", false},
		{"2002:a9fe:a9fe::1", "6to4 of 169.254.169.254", false},
		{"2002:c0a8:101::1", "6to4 of 192.168.1.1", false},
		{"2002:808:808::1", "6to4 of 8.8.8.8 (deprecated, refused whole)", false},
		{"::7f00:1", "IPv4-compatible 127.0.0.1", false},
		{"::a00:1", "IPv4-compatible 10.0.0.1", false},
		{"::a9fe:a9fe", "IPv4-compatible 169.254.169.254", false},
		{"::808:808", "IPv4-compatible 8.8.8.8 (deprecated, refused whole)", false},
		{"::ffff:0:7f00:1", "IPv4-translated 127.0.0.1", false},
		{"::ffff:0:808:808", "IPv4-translated 8.8.8.8", false},
		{"::ffff:7f00:1", "IPv4-mapped 127.0.0.1", false},
		{"::ffff:a9fe:a9fe", "IPv4-mapped 169.254.169.254", false},
		{"::ffff:808:808", "IPv4-mapped 8.8.8.8", true},
		{"64:ff9b::a00:1", "NAT64 of 10.0.0.1", false},
		{"64:ff9b:1::a00:1", "local NAT64 of 10.0.0.1", false},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo", false},
		{"2606:4700:4700::1111", "global", true},
		{"2a00:1450:4001:80b::200e", "global", true},
		{"2003::1", "global next to 6to4", true},
	} {
		if got := webhook.PublicAddress(netip.MustParseAddr(c.ip)); got != c.public {
			t.Errorf("%s (%s): public %v, want %v", c.ip, c.form, got, c.public)
		}
		u := "https://[" + c.ip + "]/hook"
		if err := webhook.CheckURL(context.Background(), u, true, false); (err == nil) != c.public {
			t.Errorf("CheckURL %s (%s): %v", u, c.form, err)
		}
	}
}
