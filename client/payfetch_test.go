package client

import (
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A Payment challenge is found at the start of a WWW-Authenticate value or
// after a comma, in any case, but not inside a quoted string nor as a
// parameter's name.
func TestHasPaymentScheme_OnlyAtAChallengeStart(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]bool{
		`Payment id="a", realm="r", method="solana", intent="charge", request="e30"`: true,
		`Bearer realm="api", Payment id="a", realm="r"`:                              true,
		`payment id="a"`:                    true,
		`Basic realm="x",   PAYMENT id="a"`: true,
		`Bearer realm="a, Payment id=b"`:    false,
		`Bearer realm="a \", Payment id=b"`: false,
		`Bearer payment=yes`:                false,
		`Bearer realm="x", Paymentx id="a"`: false,
		`Payment`:                           false,
		``:                                  false,
		`Bearer realm="x", error="a\\", Payment id="b", realm="r", request="e30"`:       true,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Payment id="x"`:       true,
		`Newauth realm="apps", type=1, title="Login to \"apps, Payment id=x\""`:         false,
		`Payment id="x", realm="Payment realm", Bearer realm="api"`:                     true,
		`Bearer realm="api",Payment id="x"`:                                             true,
		`Bearer realm="api", Payment	id="x"`:                                            true,
		`Bearer realm="api" Payment id="x"`:                                             false,
		`Bearer realm="api", token68=, Payment id="x", realm="r", expires="2026-01-01"`: true,
	} {
		if got := hasPaymentScheme(v); got != want {
			t.Errorf("hasPaymentScheme(%q) = %v, want %v", v, got, want)
		}
	}
}

// A 402 names its offers: MPP when a WWW-Authenticate line carries a
// Payment challenge (every line joined for the service), x402 from the
// PAYMENT-REQUIRED header or an x402Version 1 body; the body stays
// readable.
func TestReadOffers_BothProtocolsAndTheBodyKept(t *testing.T) {
	t.Parallel()
	v2 := `{"x402Version":2,"resource":{"url":"https://s/r"},"accepts":[{"scheme":"exact"}]}`
	v1 := `{"x402Version":1,"accepts":[{"scheme":"exact"}]}`
	resp := func(h http.Header, body string) *http.Response {
		return &http.Response{StatusCode: 402, Header: h, Body: io.NopCloser(strings.NewReader(body))}
	}
	o := readOffers(resp(http.Header{
		"Www-Authenticate": {`Bearer realm="api"`, `Payment id="a", realm="r"`},
		"Payment-Required": {base64.StdEncoding.EncodeToString([]byte(v2))},
	}, "{}"))
	if o.mpp != `Bearer realm="api", Payment id="a", realm="r"` || string(o.x402) != v2 {
		t.Fatalf("both: %+v", o)
	}
	r := resp(http.Header{}, v1)
	if o := readOffers(r); o.mpp != "" || string(o.x402) != v1 {
		t.Fatalf("v1 body: %+v", o)
	}
	if b, _ := io.ReadAll(r.Body); string(b) != v1 {
		t.Fatalf("the body after reading the offers: %q", b)
	}
	for name, c := range map[string]struct {
		h    http.Header
		body string
	}{
		"a v2 body without the header": {http.Header{}, v2},
		"a header that is not base64":  {http.Header{"Payment-Required": {"not base64!"}}, v1},
		"not JSON":                     {http.Header{"Www-Authenticate": {`Bearer realm="api"`}}, "pay me"},
	} {
		if o := readOffers(resp(c.h, c.body)); o.has(ProtocolMPP) || o.has(ProtocolX402) || o.x402Err == nil {
			t.Errorf("%s: %+v", name, o)
		}
	}
}

// The preference orders the protocols: MPP first by default, x402 first
// when preferred, one alone when only one is allowed; anything else is
// refused.
func TestPayOptions_OrderByPreference(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		o    PayOptions
		want string
	}{
		{PayOptions{}, "mpp,x402"},
		{PayOptions{Prefer: ProtocolMPP}, "mpp,x402"},
		{PayOptions{Prefer: ProtocolX402}, "x402,mpp"},
		{PayOptions{Only: ProtocolX402}, "x402"},
		{PayOptions{Prefer: ProtocolX402, Only: ProtocolMPP}, "mpp"},
	} {
		if got, err := c.o.order(); err != nil || strings.Join(got, ",") != c.want {
			t.Errorf("%+v: %v %v, want %s", c.o, got, err, c.want)
		}
	}
	for _, o := range []PayOptions{{Prefer: "tempo"}, {Only: "X402"}} {
		if _, err := o.order(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// A 402 whose MPP challenge the service says was paid before (409
// already_paid) ends PayFetch with a *ChallengePaidError naming that
// payment, inside a *PayError naming MPP: the x402 offer beside it is
// never sent to the service, and the seller gets no paid retry, whatever
// the preference allows after MPP.
func TestPayFetch_ChallengePaidBeforeEndsTheCall(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	asked := map[string]int{}
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked[r.URL.Path]++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/mpp/pay") {
			w.WriteHeader(http.StatusConflict)
			io.WriteString(w, `{"error":"the seller's challenge was already paid","reason":"already_paid","payment_id":"0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a"}`)
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":"not expected"}`)
	}))
	defer service.Close()
	retried := 0 // paid requests the seller received, under mu
	seller := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "" || r.Header.Get("PAYMENT-SIGNATURE") != "" {
			mu.Lock()
			retried++
			mu.Unlock()
		}
		pr := `{"x402Version":2,"resource":{"url":"https://s/r"},"accepts":[{"scheme":"exact"}]}`
		w.Header().Set("WWW-Authenticate", `Payment id="same", realm="r", method="solana", intent="charge", request="e30"`)
		w.Header().Set("PAYMENT-REQUIRED", base64.StdEncoding.EncodeToString([]byte(pr)))
		w.WriteHeader(http.StatusPaymentRequired)
	}))
	defer seller.Close()

	c := New(service.URL, "svc_test_x")
	for _, o := range []PayOptions{{}, {Prefer: ProtocolMPP}} {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, seller.URL+"/r", nil)
		res, err := c.PayFetch(t.Context(), "5f0c7a3e-8f0d-4b1e-9a53-0c2b8a6f4d21", req, o)
		var paid *ChallengePaidError
		var pe *PayError
		if res != nil || !errors.As(err, &paid) || paid.PaymentID != "0f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a" || paid.Reason != ReasonAlreadyPaid ||
			!errors.As(err, &pe) || pe.Protocol != ProtocolMPP {
			t.Fatalf("%+v: %+v %v", o, res, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for path, n := range asked {
		if !strings.HasSuffix(path, "/mpp/pay") {
			t.Errorf("the service was asked %s %d times", path, n)
		}
	}
	if retried != 0 {
		t.Errorf("the seller got %d paid retries", retried)
	}
}
