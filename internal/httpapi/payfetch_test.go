package httpapi_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/agentwallet/agentwallet/client"
	"github.com/agentwallet/agentwallet/internal/mpp/mpptest"
	"github.com/agentwallet/agentwallet/internal/x402test"
)

// bothFront is a resource that offers both protocols on one 402: the MPP
// seller's challenges (WWW-Authenticate: Payment …) and the x402 seller's
// PAYMENT-REQUIRED, fetched fresh from each for every unpaid request. A
// paid request goes to the seller whose credential it carries, and the
// seller's answer comes back as it is. forwarded counts the paid requests
// each seller was sent.
type bothFront struct {
	URL       string
	mu        sync.Mutex
	forwarded map[string]int
}

func (f *bothFront) count(proto string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.forwarded[proto]
}

func startBothFront(t *testing.T, mppURL, x402URL string) *bothFront {
	t.Helper()
	return startFront(t, mppURL, x402URL, false)
}

// startStaticFront is startBothFront whose 402 never changes: the sellers'
// challenges are fetched once, for the first unpaid request, and that
// same answer (the same MPP challenge id beside the same x402 offer) is
// given to every unpaid request after it. Paid requests still go to the
// seller whose credential they carry.
func startStaticFront(t *testing.T, mppURL, x402URL string) *bothFront {
	t.Helper()
	return startFront(t, mppURL, x402URL, true)
}

func startFront(t *testing.T, mppURL, x402URL string, static bool) *bothFront {
	t.Helper()
	f := &bothFront{forwarded: map[string]int{}}
	var challenge http.Header // the static 402's headers, once fetched
	get := func(r *http.Request, url, header, value string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		if header != "" {
			req.Header.Set(header, value)
		}
		return http.DefaultClient.Do(req)
	}
	pass := func(w http.ResponseWriter, resp *http.Response) {
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			if k != "Content-Length" {
				w.Header()[k] = vs
			}
		}
		w.WriteHeader(resp.StatusCode)
		io.Copy(w, resp.Body)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var proto, url, header, value string
		switch {
		case strings.HasPrefix(r.Header.Get("Authorization"), "Payment "):
			proto, url, header, value = client.ProtocolMPP, mppURL, "Authorization", r.Header.Get("Authorization")
		case r.Header.Get("PAYMENT-SIGNATURE") != "":
			proto, url, header, value = client.ProtocolX402, x402URL, "PAYMENT-SIGNATURE", r.Header.Get("PAYMENT-SIGNATURE")
		}
		if proto != "" {
			f.mu.Lock()
			f.forwarded[proto]++
			f.mu.Unlock()
			resp, err := get(r, url, header, value)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			pass(w, resp)
			return
		}
		f.mu.Lock()
		fixed := challenge
		f.mu.Unlock()
		if fixed != nil {
			answer402(w, fixed)
			return
		}
		m, err := get(r, mppURL, "", "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		m.Body.Close()
		x, err := get(r, x402URL, "", "")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		x.Body.Close()
		if m.StatusCode != http.StatusPaymentRequired || x.StatusCode != http.StatusPaymentRequired {
			http.Error(w, "a seller did not ask for payment", http.StatusBadGateway)
			return
		}
		h := http.Header{}
		for _, v := range m.Header.Values("WWW-Authenticate") {
			h.Add("WWW-Authenticate", v)
		}
		h.Set("PAYMENT-REQUIRED", x.Header.Get("PAYMENT-REQUIRED"))
		if static {
			f.mu.Lock()
			if challenge == nil {
				challenge = h
			}
			h = challenge
			f.mu.Unlock()
		}
		answer402(w, h)
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// answer402 writes a 402 carrying the challenges in h.
func answer402(w http.ResponseWriter, h http.Header) {
	for k, vs := range h {
		w.Header()[k] = append([]string(nil), vs...)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write([]byte(`{"title":"Payment Required","status":402}`))
}

// payFetch is the Go client's PayFetch of url from wallet with o; the
// answer's body is read and closed.
func payFetch(t *testing.T, c *client.Client, wallet, url string, o client.PayOptions) (*client.PayFetchResult, string, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.PayFetch(t.Context(), wallet, req, o)
	if err != nil || res.Response == nil {
		return res, "", err
	}
	defer res.Response.Body.Close()
	body, err := io.ReadAll(res.Response.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(body), nil
}

// The Go client's PayFetch buys from the official MPP seller through the
// service, the seller's fee payer paying the fee: the content comes back,
// the seller's recipient grows by exactly the price, the receipt is
// recorded, and once swept the payment is listed settled with the
// receipt's signature. At the approval threshold it pays nothing and says
// so with the approval; approved, the same call with approval_id buys it
// once. A seller outside the allowlist is a *BlockedError naming MPP; no
// payment is made.
func TestPayFetch_GoClientBuysFromTheMPPSeller(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	eng, _ := e.startWorker()
	seller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: 10_000})
	wallet, pub := e.x402Wallet(nil)
	parking, _ := e.x402Wallet(map[string]any{"approval_threshold_usdc": 0.01})
	fenced, _ := e.x402Wallet(map[string]any{"allowlist": []string{newAddress()}})
	_, agentKey := e.agentKey()
	c := client.New(e.url, agentKey)
	ctx := t.Context()
	resource := seller.URL + mpptest.Weather
	before := seller.Balance(t, seller.Recipient)

	res, body, err := payFetch(t, c, wallet, resource, client.PayOptions{})
	if err != nil || res.Response.StatusCode != http.StatusOK || !strings.Contains(body, `"route":"/weather"`) {
		t.Fatalf("pay fetch: %v %+v %s", err, res, body)
	}
	p := res.Payment
	if p.Protocol != client.ProtocolMPP || p.Status != client.StatusPaid || p.Amount.String() != "0.01" || p.Asset != "USDC" ||
		p.PayTo != seller.Recipient || p.Resource != resource || p.MPP == nil || p.X402 != nil || p.Declined != nil {
		t.Fatalf("payment %+v", p)
	}
	if p.ReceiptErr != nil || p.Receipt == nil || p.Receipt.Status != "success" || p.Receipt.Reference == "" {
		t.Fatalf("receipt %+v, %v", p.Receipt, p.ReceiptErr)
	}
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 10_000 {
		t.Fatalf("the seller's USDC grew by %d, want 10000", grew)
	}
	if l := seller.Lamports(t, pub); l != 0 {
		t.Fatalf("the wallet holds %d lamports", l)
	}
	e.mppState(eng, p.PaymentID, "settled")
	listed, next, err := c.ListMPPPayments(ctx, client.MPPFilter{WalletID: wallet, State: "settled"})
	if err != nil || next != "" || len(listed) != 1 || listed[0].ID != p.PaymentID || listed[0].Signature == nil ||
		*listed[0].Signature != p.Receipt.Reference || listed[0].Receipt == nil || listed[0].Receipt.Reference != p.Receipt.Reference {
		t.Fatalf("listed %+v %q %v", listed, next, err)
	}
	got, err := c.GetMPPPayment(ctx, p.PaymentID)
	if err != nil || got.State != "settled" || got.Realm != seller.Realm || got.FeePayer == nil || *got.FeePayer != seller.FeePayer {
		t.Fatalf("get %+v %v", got, err)
	}
	// The receipt is kept once: reporting it again changes nothing.
	again, err := c.RecordMPPReceipt(ctx, p.PaymentID, fakeReceipt(got.ChallengeID))
	if err != nil || again.Receipt == nil || again.Receipt.Reference != p.Receipt.Reference {
		t.Fatalf("a second receipt: %+v %v", again, err)
	}

	// At the threshold: parked, nothing paid, the 402 given back.
	res, _, err = payFetch(t, c, parking, resource, client.PayOptions{})
	if err != nil || res.Payment == nil || res.Payment.Status != client.StatusPendingApproval || res.Payment.Protocol != client.ProtocolMPP ||
		!strings.HasPrefix(res.Payment.ApprovalID, "ap_") || res.Response.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("at the threshold: %+v %v", res, err)
	}
	apID := res.Payment.ApprovalID
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 10_000 {
		t.Fatalf("a parked payment moved money: the seller's USDC grew by %d", grew)
	}
	if status, a := e.approve(apID, e.key, nil); status != http.StatusOK {
		t.Fatalf("approve: %d %v", status, a)
	}
	res, _, err = payFetch(t, c, parking, resource, client.PayOptions{ApprovalID: apID})
	if err != nil || res.Response.StatusCode != http.StatusOK || res.Payment.Status != client.StatusPaid || res.Payment.Receipt == nil {
		t.Fatalf("with the approval: %+v %v", res, err)
	}
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 20_000 {
		t.Fatalf("the seller's USDC grew by %d, want 20000", grew)
	}

	// A policy block: the typed error, naming the protocol.
	_, _, err = payFetch(t, c, fenced, resource, client.PayOptions{})
	var blocked *client.BlockedError
	var pe *client.PayError
	if !errors.As(err, &blocked) || blocked.Reason != client.ReasonRecipientNotAllowed || !errors.As(err, &pe) || pe.Protocol != client.ProtocolMPP {
		t.Fatalf("outside the allowlist: %v", err)
	}
	// A free answer passes through unpaid.
	if res, _, err := payFetch(t, c, wallet, seller.URL+"/health", client.PayOptions{}); err != nil || res.Payment != nil || res.Response.StatusCode != http.StatusOK {
		t.Fatalf("a free route: %+v %v", res, err)
	}
	if grew := seller.Balance(t, seller.Recipient) - before; grew != 20_000 {
		t.Fatalf("the seller's USDC grew by %d, want 20000", grew)
	}
}

// A resource that offers both protocols on one 402 is paid once, by the
// preferred one: MPP by default (the x402 seller is sent nothing and
// receives nothing), x402 when preferred (the MPP seller receives
// nothing). When the service cannot pay the preferred one (an MPP charge
// in PYUSD, which the wallet may not spend: 422), the other is paid
// instead, once; allowed only MPP, nothing is paid.
func TestPayFetch_BothProtocolsPaidOnceByThePreferred(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	mppSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: 10_000})
	pyusdSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: 10_000, Currency: "pyusd"})
	x402Seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 20_000})
	both := startBothFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	pyusdOrX402 := startBothFront(t, pyusdSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	wallet, _ := e.x402Wallet(nil)
	_, agentKey := e.agentKey()
	c := client.New(e.url, agentKey)
	mppBefore, x402Before, pyusdBefore := mppSeller.Balance(t, mppSeller.Recipient), x402Seller.USDC(t, x402Seller.PayTo), pyusdSeller.Balance(t, pyusdSeller.Recipient)
	received := func() (mpp, x402, pyusd uint64) {
		return mppSeller.Balance(t, mppSeller.Recipient) - mppBefore, x402Seller.USDC(t, x402Seller.PayTo) - x402Before,
			pyusdSeller.Balance(t, pyusdSeller.Recipient) - pyusdBefore
	}

	res, body, err := payFetch(t, c, wallet, both.URL+"/weather", client.PayOptions{})
	if err != nil || res.Response.StatusCode != http.StatusOK || !strings.Contains(body, "sunny") || res.Payment.Protocol != client.ProtocolMPP ||
		res.Payment.Receipt == nil || res.Payment.Declined != nil {
		t.Fatalf("by default: %+v %s %v", res, body, err)
	}
	if m, x, _ := received(); m != 10_000 || x != 0 || both.count(client.ProtocolX402) != 0 || both.count(client.ProtocolMPP) != 1 {
		t.Fatalf("by default the MPP seller received %d and the x402 seller %d (sent %v)", m, x, both.forwarded)
	}

	res, body, err = payFetch(t, c, wallet, both.URL+"/weather", client.PayOptions{Prefer: client.ProtocolX402})
	if err != nil || res.Response.StatusCode != http.StatusOK || !strings.Contains(body, "sunny") || res.Payment.Protocol != client.ProtocolX402 ||
		res.Payment.Settlement == nil || !res.Payment.Settlement.Success || res.Payment.Amount.String() != "0.02" {
		t.Fatalf("preferring x402: %+v %s %v", res, body, err)
	}
	if m, x, _ := received(); m != 10_000 || x != 20_000 || both.count(client.ProtocolMPP) != 1 || both.count(client.ProtocolX402) != 1 {
		t.Fatalf("preferring x402 the MPP seller received %d and the x402 seller %d (sent %v)", m, x, both.forwarded)
	}

	// The preferred one cannot be paid: the other is, once.
	res, _, err = payFetch(t, c, wallet, pyusdOrX402.URL+"/weather", client.PayOptions{})
	var api *client.APIError
	if err != nil || res.Response.StatusCode != http.StatusOK || res.Payment.Protocol != client.ProtocolX402 ||
		!errors.As(res.Payment.Declined, &api) || api.Status != http.StatusUnprocessableEntity || !strings.Contains(res.Payment.Declined.Error(), "mpp") {
		t.Fatalf("MPP in PYUSD or x402: %+v %v", res, err)
	}
	if _, x, p := received(); x != 40_000 || p != 0 || pyusdOrX402.count(client.ProtocolMPP) != 0 || pyusdOrX402.count(client.ProtocolX402) != 1 {
		t.Fatalf("the PYUSD seller received %d and the x402 seller %d in all (sent %v)", p, x, pyusdOrX402.forwarded)
	}
	// Only MPP: the service's 422, and nothing is paid.
	_, _, err = payFetch(t, c, wallet, pyusdOrX402.URL+"/weather", client.PayOptions{Only: client.ProtocolMPP})
	if !errors.As(err, &api) || api.Status != http.StatusUnprocessableEntity || !strings.Contains(err.Error(), "pyusd") {
		t.Fatalf("only MPP in PYUSD: %v", err)
	}
	// Only MPP where the 402 offers only x402: nothing to pay.
	_, _, err = payFetch(t, c, wallet, x402Seller.URL+x402test.Weather, client.PayOptions{Only: client.ProtocolMPP})
	if !errors.Is(err, client.ErrNoChallenge) {
		t.Fatalf("only MPP from an x402 seller: %v", err)
	}
	if m, x, p := received(); m != 10_000 || x != 40_000 || p != 0 || pyusdOrX402.count(client.ProtocolX402) != 1 {
		t.Fatalf("in all the MPP seller received %d, the x402 seller %d, the PYUSD seller %d", m, x, p)
	}
}

// A seller whose 402 never changes (the same MPP challenge id beside the
// same x402 offer on every request) is paid once by the Go client: the
// first PayFetch pays the MPP challenge; a second, and a third from
// another wallet of the account, are a *ChallengePaidError naming that
// payment and pay nothing more, neither the challenge again nor the x402
// offer beside it. One payment row, one signed request, the MPP seller's
// recipient grown by one price and the x402 seller's by nothing, the
// buying wallet's USDC down by one price.
func TestPayFetch_GoClientPaysAStaticChallengeOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.startWorker()
	const price = 10_000
	mppSeller := mpptest.Start(t, e.ln.URL, mpptest.Options{FeePayer: true, Price: price})
	x402Seller := x402test.Start(t, e.ln.URL, x402test.Options{Price: 20_000})
	static := startStaticFront(t, mppSeller.URL+mpptest.Weather, x402Seller.URL+x402test.Weather)
	wallet, pub := e.x402Wallet(nil)
	other, _ := e.x402Wallet(nil)
	_, agentKey := e.agentKey()
	c := client.New(e.url, agentKey)
	mppBefore, x402Before, walletBefore := mppSeller.Balance(t, mppSeller.Recipient), x402Seller.USDC(t, x402Seller.PayTo), mppSeller.Balance(t, pub)

	res, body, err := payFetch(t, c, wallet, static.URL+"/weather", client.PayOptions{})
	if err != nil || res.Response.StatusCode != http.StatusOK || !strings.Contains(body, "sunny") || res.Payment.Protocol != client.ProtocolMPP {
		t.Fatalf("first: %+v %s %v", res, body, err)
	}
	first := res.Payment.PaymentID
	for _, w := range []string{wallet, other} {
		res, _, err := payFetch(t, c, w, static.URL+"/weather", client.PayOptions{})
		var paid *client.ChallengePaidError
		var pe *client.PayError
		if !errors.As(err, &paid) || paid.PaymentID != first || paid.Status != http.StatusConflict || paid.Reason != client.ReasonAlreadyPaid ||
			!errors.As(err, &pe) || pe.Protocol != client.ProtocolMPP || res != nil {
			t.Fatalf("again from %s: %+v %v", w, res, err)
		}
	}

	e.wantRows("x402_payments", 1)
	if m, x := static.count(client.ProtocolMPP), static.count(client.ProtocolX402); m != 1 || x != 0 {
		t.Fatalf("the static seller was sent %d MPP and %d x402 payments, want 1 and 0", m, x)
	}
	if m, x := mppSeller.Balance(t, mppSeller.Recipient)-mppBefore, x402Seller.USDC(t, x402Seller.PayTo)-x402Before; m != price || x != 0 {
		t.Fatalf("the MPP seller received %d (want %d), the x402 seller %d (want 0)", m, price, x)
	}
	if spent := walletBefore - mppSeller.Balance(t, pub); spent != price {
		t.Fatalf("the wallet spent %d, want %d", spent, price)
	}
}
