package deposit_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/programs/token"
	"github.com/uptrace/bun"

	"github.com/agentwallet/agentwallet/internal/chaintest"
	"github.com/agentwallet/agentwallet/internal/localnettest"
	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/solana"
	"github.com/agentwallet/agentwallet/internal/wallet"
	"github.com/agentwallet/agentwallet/internal/wallettest"
)

// plantTokenAccount writes a token account at address (mint, owner,
// amount; initialized, rent-exempt) straight into the localnet's state,
// as if someone had made it: no transaction shows it.
func plantTokenAccount(t testing.TB, ln *localnettest.Localnet, address, mint, owner sol.PublicKey, amount uint64) {
	t.Helper()
	data := make([]byte, 165)
	copy(data[0:32], mint[:])
	copy(data[32:64], owner[:])
	binary.LittleEndian.PutUint64(data[64:72], amount)
	data[108] = 1 // initialized
	ln.Call(t, nil, "surfnet_setAccount", address.String(), map[string]any{
		"lamports": 2_039_280, "owner": sol.TokenProgramID.String(),
		"data": []string{base64.StdEncoding.EncodeToString(data), "base64"},
	})
}

// signAs signs ixs as wallet w (the fee payer, with the key the service
// holds, used outside it) and the extra keys, sends them and waits until
// they are confirmed.
func signAs(t *testing.T, db *bun.DB, mk wallettest.MasterKey, c *solana.Client, w wallet.Wallet, ixs []sol.Instruction, extra ...sol.PrivateKey) sol.Signature {
	t.Helper()
	ctx := context.Background()
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := sol.NewTransaction(ixs, bh.Hash, sol.TransactionPayer(w.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	key := w.Key()
	if key.Sealed, err = wallet.SealedSecret(ctx, db, w.ID); err != nil {
		t.Fatal(err)
	}
	walletSign := signer.For(mk.Keystore(t), key)
	sign := func(ctx context.Context, pub ed25519.PublicKey, message []byte) ([]byte, error) {
		for _, k := range extra {
			if bytes.Equal(k.PublicKey().Bytes(), pub) {
				return ed25519.Sign(ed25519.PrivateKey(k), message), nil
			}
		}
		return walletSign(ctx, pub, message)
	}
	raw, sig, err := solana.Sign(ctx, tx, sign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Broadcast(ctx, raw); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, c, sig)
	return sig
}

// rpcFault is a node in front of target whose answer to each call fault
// decides: pass it on (""), fail it ("fail": 503), or hold it until the
// caller gives up ("hang"). It counts the calls by method.
type rpcFault struct {
	URL   string
	mu    sync.Mutex
	calls map[string]int
}

func (f *rpcFault) Calls(method string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[method]
}

func newRPCFault(t *testing.T, target string, fault func(method, params string) string) *rpcFault {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	f := &rpcFault{calls: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		var call struct {
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(body, &call)
		f.mu.Lock()
		f.calls[call.Method]++
		f.mu.Unlock()
		switch fault(call.Method, string(call.Params)) {
		case "fail":
			http.Error(w, "down", http.StatusServiceUnavailable)
		case "hang":
			<-r.Context().Done()
		default:
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// watchedOf are the addresses of a wallet's watched accounts.
func watchedOf(t *testing.T, db *bun.DB, w wallet.Wallet) map[string]bool {
	t.Helper()
	var addrs []string
	if err := db.NewRaw(`SELECT address FROM watched_accounts WHERE wallet_id = ?`, w.ID).Scan(context.Background(), &addrs); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, a := range addrs {
		out[a] = true
	}
	return out
}

// mintData is an initialized mint's account data with decimals, no
// authority, in base64.
func mintData(decimals byte) string {
	data := make([]byte, 82)
	data[44] = decimals
	data[45] = 1 // initialized
	return base64.StdEncoding.EncodeToString(data)
}

// sendToken moves amount from the payer's token account src to dst (a
// plain Transfer, any mint), signed by the payer, and waits until it is
// confirmed.
func sendToken(t *testing.T, c *solana.Client, p *chaintest.Payer, src, dst sol.PublicKey, amount uint64) sol.Signature {
	t.Helper()
	ctx := context.Background()
	bh, err := c.LatestBlockhash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := sol.NewTransaction([]sol.Instruction{token.NewTransferInstruction(amount, src, dst, p.PublicKey(), nil).Build()},
		bh.Hash, sol.TransactionPayer(p.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	raw, sig, err := solana.Sign(ctx, tx, signer.Plain(ed25519.PrivateKey(p.Key)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Broadcast(ctx, raw); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, c, sig)
	return sig
}
