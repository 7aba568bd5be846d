package mpp

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/solana"
)

// devnetPYUSD is devnet PYUSD (Token-2022), which the localnet carries
// with mainnet PYUSD's extensions.
var devnetPYUSD = solana.Token{Symbol: "PYUSD", Mint: sol.MustPublicKeyFromBase58("CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM"), Program: sol.Token2022ProgramID, Decimals: 6}

// testNow is the clock of the unit tests; testExpires is a challenge's
// expiry five minutes later.
var (
	testNow     = time.Date(2026, 11, 28, 5, 12, 43, 0, time.UTC)
	testExpires = "2026-11-28T05:17:43.356Z"
)

// party is a key pair of a test: the wallet, a seller, a fee payer.
type party struct {
	key ed25519.PrivateKey
	pub sol.PublicKey
}

func newParty(t testing.TB) party {
	t.Helper()
	pub, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return party{key: key, pub: sol.PublicKeyFromBytes(pub)}
}

// ownerOf is the public key of a test wallet's key (zero for a key that is
// not one).
func ownerOf(key ed25519.PrivateKey) sol.PublicKey {
	if len(key) != ed25519.PrivateKeySize {
		return sol.PublicKey{}
	}
	return sol.PublicKeyFromBytes(key.Public().(ed25519.PublicKey))
}

// request is a devnet USDC charge request of amount to recipient, as the
// official server sends it for a mint with decimals 6.
func request(recipient sol.PublicKey, amount string) map[string]any {
	return map[string]any{
		"amount": amount, "currency": solana.DevnetUSDCMint.String(), "recipient": recipient.String(),
		"methodDetails": map[string]any{"network": "devnet", "decimals": 6, "tokenProgram": sol.TokenProgramID.String()},
	}
}

// sponsored makes r's seller pay the fee with feePayer.
func sponsored(r map[string]any, feePayer sol.PublicKey) map[string]any {
	details(r)["feePayer"] = true
	details(r)["feePayerKey"] = feePayer.String()
	return r
}

func details(r map[string]any) map[string]any { return r["methodDetails"].(map[string]any) }

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// encodeRequest is r as a challenge's request: base64url of its JSON.
func encodeRequest(t testing.TB, r map[string]any) string {
	return base64.RawURLEncoding.EncodeToString(mustJSON(t, r))
}

// challengeOf is a Solana charge challenge for r, expiring at testExpires.
func challengeOf(t testing.TB, r map[string]any) Challenge {
	return Challenge{
		ID: "defTlZ_B5E5HUYzEw61ZM3Mlx8CnfN8grbMlAEYnYFw", Realm: "seller.example", Method: MethodSolana, Intent: IntentCharge,
		Request: encodeRequest(t, r), Expires: testExpires, Description: "demo item",
	}
}

// headerOf writes challenges as mppx does: comma-joined, every value a
// quoted-string with \ and " escaped and characters above U+00FF as
// \uXXXX (UTF-16 code units), those from U+0080 to U+00FF as single
// ISO-8859-1 octets.
func headerOf(cs ...Challenge) string {
	quote := func(s string) string {
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			switch {
			case r == '\\' || r == '"':
				b.WriteByte('\\')
				b.WriteRune(r)
			case r >= 0x80 && r <= 0xff:
				b.WriteByte(byte(r))
			case r > 0xffff:
				r -= 0x10000
				fmt.Fprintf(&b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			case r > 0xff:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	var out []string
	for _, c := range cs {
		parts := []string{"id=" + quote(c.ID), "realm=" + quote(c.Realm), "method=" + quote(c.Method), "intent=" + quote(c.Intent), "request=" + quote(c.Request)}
		for _, p := range []struct{ name, v string }{{"description", c.Description}, {"digest", c.Digest}, {"expires", c.Expires}, {"header", c.Header}, {"opaque", c.Opaque}} {
			if p.v != "" {
				parts = append(parts, p.name+"="+quote(p.v))
			}
		}
		out = append(out, "Payment "+strings.Join(parts, ", "))
	}
	return strings.Join(out, ", ")
}
