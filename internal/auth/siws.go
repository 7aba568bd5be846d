package auth

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/mr-tron/base58"
)

// SignIn is a Sign-In With Solana input (the Wallet Standard's
// solana:signIn fields the dashboard uses). The server makes it and keeps
// it; a client's copy is never trusted.
type SignIn struct {
	Domain         string
	Statement      string
	URI            string
	Version        string
	Nonce          string
	IssuedAt       time.Time
	ExpirationTime time.Time
}

// Input is the input as a wallet's solana:signIn takes it (and as it is
// kept between challenge and verify).
func (s SignIn) Input() map[string]string {
	return map[string]string{
		"domain": s.Domain, "statement": s.Statement, "uri": s.URI, "version": s.Version, "nonce": s.Nonce,
		"issuedAt": s.IssuedAt.UTC().Format(time.RFC3339), "expirationTime": s.ExpirationTime.UTC().Format(time.RFC3339),
	}
}

// SignInFromInput reads an input made by Input (from the server's own
// store, never from a client).
func SignInFromInput(in map[string]string) (SignIn, error) {
	issued, err := time.Parse(time.RFC3339, in["issuedAt"])
	if err != nil {
		return SignIn{}, fmt.Errorf("issuedAt: %w", err)
	}
	expires, err := time.Parse(time.RFC3339, in["expirationTime"])
	if err != nil {
		return SignIn{}, fmt.Errorf("expirationTime: %w", err)
	}
	return SignIn{Domain: in["domain"], Statement: in["statement"], URI: in["uri"], Version: in["version"], Nonce: in["nonce"],
		IssuedAt: issued, ExpirationTime: expires}, nil
}

// SignInLifetime is how long a sign-in input may be used.
const SignInLifetime = 5 * time.Minute

// signInStatement is what the wallet shows the human.
const signInStatement = "Sign in to the Agent Wallet dashboard."

// NewSignIn makes the input for origin (the dashboard's configured origin,
// never a request's Host): its domain is origin's host with port, its URI
// the origin, with a random nonce.
func NewSignIn(origin string, now time.Time) (SignIn, error) {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return SignIn{}, fmt.Errorf("dashboard origin %q is not an http(s) origin", origin)
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return SignIn{}, err
	}
	now = now.UTC().Truncate(time.Second)
	return SignIn{
		Domain: u.Host, Statement: signInStatement, URI: u.Scheme + "://" + u.Host, Version: "1",
		Nonce: base58.Encode(raw), IssuedAt: now, ExpirationTime: now.Add(SignInLifetime),
	}, nil
}

// Text is the message the address signs for this input, in the standard's
// text format (the fields in their fixed order; absent ones omitted), as
// the Wallet Standard's createSignInMessageText renders it.
func (s SignIn) Text(address string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s wants you to sign in with your Solana account:\n%s", s.Domain, address)
	if s.Statement != "" {
		fmt.Fprintf(&b, "\n\n%s", s.Statement)
	}
	var fields []string
	if s.URI != "" {
		fields = append(fields, "URI: "+s.URI)
	}
	if s.Version != "" {
		fields = append(fields, "Version: "+s.Version)
	}
	if s.Nonce != "" {
		fields = append(fields, "Nonce: "+s.Nonce)
	}
	if !s.IssuedAt.IsZero() {
		fields = append(fields, "Issued At: "+s.IssuedAt.UTC().Format(time.RFC3339))
	}
	if !s.ExpirationTime.IsZero() {
		fields = append(fields, "Expiration Time: "+s.ExpirationTime.UTC().Format(time.RFC3339))
	}
	if len(fields) > 0 {
		b.WriteString("\n\n" + strings.Join(fields, "\n"))
	}
	return b.String()
}

// Sign-in refusals; each answers 401 with its text.
var (
	ErrSignInUnknown   = errors.New("unknown or already used sign-in request: start again")
	ErrSignInExpired   = errors.New("the sign-in request has expired: start again")
	ErrSignInMessage   = errors.New("the signed message is not this sign-in request (another domain, URI, nonce or address)")
	ErrSignInSignature = errors.New("the signature does not verify for this address")
	ErrSignInAddress   = errors.New("the address is not a Solana address")
	ErrSignInNoUser    = errors.New("this address is no user of any account")
)

// VerifySignIn checks that message is exactly s's text for address, and
// that signature is address's ed25519 signature of it, at now.
func VerifySignIn(s SignIn, address string, message, signature []byte, now time.Time) error {
	pub, err := base58.Decode(address)
	if err != nil || len(pub) != ed25519.PublicKeySize || base58.Encode(pub) != address {
		return ErrSignInAddress
	}
	if !now.Before(s.ExpirationTime) {
		return ErrSignInExpired
	}
	if !bytes.Equal(message, []byte(s.Text(address))) {
		return ErrSignInMessage
	}
	if len(signature) != ed25519.SignatureSize || !ed25519.Verify(pub, message, signature) {
		return ErrSignInSignature
	}
	return nil
}
