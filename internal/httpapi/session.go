package httpapi

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/agentwallet/agentwallet/internal/audit"
	"github.com/agentwallet/agentwallet/internal/auth"
	"github.com/agentwallet/agentwallet/internal/ratelimit"
)

// SessionPath is the dashboard's sign-in API (Sign-In With Solana and the
// session): outside the public API, which it authenticates for.
const SessionPath = "/api/dashboard/v1/session"

// CSRFHeader carries a session's CSRF token on every unsafe request.
const CSRFHeader = "X-CSRF-Token"

// signInKey is where a sign-in input waits for its signature, by nonce.
func signInKey(nonce string) string { return "agentwallet:siws:" + nonce }

// secureCookies: the session cookie is Secure (and __Host-) unless the
// dashboard is served over plain http on a loopback address.
func (s *server) secureCookies() bool {
	u, err := url.Parse(s.DashboardOrigin)
	if err != nil || u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	ip := net.ParseIP(host)
	return !(host == "localhost" || ip != nil && ip.IsLoopback())
}

func (s *server) cookieName() string {
	if s.secureCookies() {
		return "__Host-aw_session"
	}
	return "aw_session"
}

// sessionToken is the session cookie's value in a Cookie header, or "".
func (s *server) sessionToken(header string) string {
	if header == "" {
		return ""
	}
	cs, err := http.ParseCookie(header)
	if err != nil {
		return ""
	}
	for _, c := range cs {
		if c.Name == s.cookieName() {
			return c.Value
		}
	}
	return ""
}

func unsafeMethod(m string) bool {
	return m != http.MethodGet && m != http.MethodHead && m != http.MethodOptions
}

// checkCSRF says why a cookie-authenticated unsafe request is refused, or
// "": it must come from the dashboard's origin and carry the session's
// CSRF token.
func (s *server) checkCSRF(origin, token, want string) string {
	if origin == "" || origin != s.DashboardOrigin {
		return "cross-origin request refused: the Origin is not the dashboard's"
	}
	if token == "" || subtle.ConstantTimeCompare([]byte(token), []byte(want)) != 1 {
		return "CSRF token missing or wrong: send the session's csrf_token in " + CSRFHeader
	}
	return ""
}

// sessionView is what the dashboard learns of its session.
type sessionView struct {
	Address   string            `json:"address"`
	AccountID uuid.UUID         `json:"account_id"`
	Role      auth.Role         `json:"role"`
	Network   string            `json:"network"`
	CSRFToken string            `json:"csrf_token"`
	Accounts  []auth.Membership `json:"accounts"`
	// LocalChain: the service runs on a local chain, where the wallet page
	// offers test funds.
	LocalChain bool `json:"local_chain"`
}

// registerSession mounts the sign-in routes.
func (s *server) registerSession(mux *http.ServeMux) {
	mux.HandleFunc("POST "+SessionPath+"/challenge", s.signInChallenge)
	mux.HandleFunc("POST "+SessionPath, s.signInVerify)
	mux.HandleFunc("GET "+SessionPath, s.sessionRead)
	mux.HandleFunc("POST "+SessionPath+"/account", s.sessionSwitch)
	mux.HandleFunc("DELETE "+SessionPath, s.signOut)
}

// signInGuard admits a request to the sign-in routes, or answers it and
// returns false. It must come from the dashboard's origin (403) with a
// JSON body (415): a page on another site can post a JSON-looking body
// through a <form enctype=text/plain>, but not as application/json, and
// fetch cannot send that type across sites without a CORS preflight the
// service never grants; so no other site can start or finish a sign-in
// in a visitor's browser (login CSRF). These checks come before the
// count, so such a page cannot spend a visitor's bucket either. Then the
// request counts in its client's anonymous bucket, whose headers every
// later answer carries (429 past it, 503 without Redis, which sign-in
// needs anyway).
func (s *server) signInGuard(w http.ResponseWriter, r *http.Request) bool {
	if o := r.Header.Get("Origin"); o == "" || o != s.DashboardOrigin {
		s.refuseSignIn(r.Context(), "cross_origin", "Origin", r.Header.Get("Origin"))
		writeError(w, http.StatusForbidden, "cross-origin request refused: sign-in needs the dashboard's Origin")
		return false
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		s.refuseSignIn(r.Context(), "not_json", "Content-Type", r.Header.Get("Content-Type"))
		writeError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json")
		return false
	}
	return s.limitHTTP(w, r, "ip:"+s.requestClient(r), ratelimit.Anonymous, true)
}

// signInReasons names each sign-in refusal in the refusals metric.
var signInReasons = map[error]string{
	auth.ErrSignInUnknown:   "unknown_request",
	auth.ErrSignInExpired:   "expired",
	auth.ErrSignInMessage:   "wrong_message",
	auth.ErrSignInSignature: "bad_signature",
	auth.ErrSignInAddress:   "bad_address",
	auth.ErrSignInNoUser:    "no_user",
}

// refuseSignIn logs a refused sign-in request and counts it by reason.
// Refusals are not audited: the caller proved nothing, and an entry under
// the address it named would let anyone write into a person's accounts.
func (s *server) refuseSignIn(ctx context.Context, reason string, args ...any) {
	s.metrics.signInRefusals.WithLabelValues(reason).Inc()
	s.log.InfoContext(ctx, "sign-in refused", append([]any{"reason", reason}, args...)...)
}

// signInChallenge issues a Sign-In With Solana input for the configured
// origin and keeps it by nonce for SignInLifetime. It takes no body: an
// empty one or {}.
func (s *server) signInChallenge(w http.ResponseWriter, r *http.Request) {
	if !s.signInGuard(w, r) {
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 4<<10))
	var body map[string]json.RawMessage
	if err != nil || len(bytes.TrimSpace(raw)) > 0 && (json.Unmarshal(raw, &body) != nil || len(body) > 0) {
		s.refuseSignIn(r.Context(), "malformed")
		writeError(w, http.StatusBadRequest, "this route takes no body: send {}")
		return
	}
	in, err := auth.NewSignIn(s.DashboardOrigin, time.Now())
	if err != nil {
		s.log.ErrorContext(r.Context(), "sign-in challenge", "err", err)
		writeError(w, http.StatusServiceUnavailable, "the dashboard's origin is not configured (DASHBOARD_ORIGIN)")
		return
	}
	raw, _ = json.Marshal(in.Input())
	ok, err := s.Redis.SetNX(r.Context(), signInKey(in.Nonce), raw, auth.SignInLifetime).Result()
	if err != nil || !ok {
		writeError(w, http.StatusServiceUnavailable, "sign-in is unavailable; try again")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"input": in.Input()})
}

// signInVerify takes the input of the posted nonce exactly once, checks
// that the address signed exactly its text, and that the address is a
// user of an account; then it starts a session (cookie and CSRF token),
// audited as session.signed_in. Every refusal is 401, logged and counted
// (refuseSignIn), never audited.
func (s *server) signInVerify(w http.ResponseWriter, r *http.Request) {
	if !s.signInGuard(w, r) {
		return
	}
	var body struct {
		Nonce     string `json:"nonce"`
		Address   string `json:"address"`
		Message   string `json:"message"`   // base64 of the signed bytes
		Signature string `json:"signature"` // base64 of the ed25519 signature
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, 16<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		s.refuseSignIn(r.Context(), "malformed")
		writeError(w, http.StatusBadRequest, "malformed JSON body: want nonce, address, message and signature")
		return
	}
	message, err1 := base64.StdEncoding.DecodeString(body.Message)
	signature, err2 := base64.StdEncoding.DecodeString(body.Signature)
	if err1 != nil || err2 != nil || body.Nonce == "" {
		s.refuseSignIn(r.Context(), "malformed")
		writeError(w, http.StatusBadRequest, "nonce, and message and signature in base64, are required")
		return
	}
	ctx := r.Context()
	refuse := func(reason error) {
		s.refuseSignIn(ctx, cmp.Or(signInReasons[reason], "other"), "address", body.Address)
		writeError(w, http.StatusUnauthorized, reason.Error())
	}
	raw, err := s.Redis.GetDel(ctx, signInKey(body.Nonce)).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		refuse(auth.ErrSignInUnknown)
		return
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "sign-in is unavailable; try again")
		return
	}
	var stored map[string]string
	if err := json.Unmarshal(raw, &stored); err != nil {
		refuse(auth.ErrSignInUnknown)
		return
	}
	in, err := auth.SignInFromInput(stored)
	if err != nil {
		refuse(auth.ErrSignInUnknown)
		return
	}
	if err := auth.VerifySignIn(in, body.Address, message, signature, time.Now()); err != nil {
		refuse(err)
		return
	}
	ms, err := auth.Memberships(ctx, s.DB, body.Address)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "sign-in is unavailable; try again")
		return
	}
	if len(ms) == 0 {
		refuse(auth.ErrSignInNoUser)
		return
	}
	sess, err := auth.StartSession(ctx, s.DB, body.Address, ms[0].AccountID)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "sign-in is unavailable; try again")
		return
	}
	if err := audit.Append(ctx, s.DB, audit.Entry{
		AccountID: ms[0].AccountID,
		At:        time.Now(),
		Actor:     audit.Actor(auth.UserActorID(body.Address)),
		Action:    audit.ActionSignedIn,
		Target:    string(audit.UserActor(body.Address)),
		Details:   map[string]any{"session_id": sess.ID},
	}); err != nil {
		s.log.ErrorContext(ctx, "audit a sign-in", "err", err)
	}
	http.SetCookie(w, &http.Cookie{
		Name: s.cookieName(), Value: sess.Token, Path: "/", HttpOnly: true, Secure: s.secureCookies(),
		SameSite: http.SameSiteStrictMode, MaxAge: int(auth.SessionAbsolute.Seconds()),
	})
	writeJSON(w, http.StatusOK, sessionView{Address: body.Address, AccountID: ms[0].AccountID, Role: ms[0].Role,
		Network: string(ms[0].Network), CSRFToken: sess.CSRFToken, Accounts: ms, LocalChain: s.Faucet != nil})
}

// session resolves the request's session (nil and answered when there is
// none); unsafe requests also need the CSRF token and the origin.
func (s *server) session(w http.ResponseWriter, r *http.Request) (*auth.Principal, string) {
	token := s.sessionToken(r.Header.Get("Cookie"))
	if token == "" {
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return nil, ""
	}
	p, csrf, err := auth.SessionPrincipal(r.Context(), s.DB, token)
	switch {
	case errors.Is(err, auth.ErrUnauthorized):
		writeError(w, http.StatusUnauthorized, "Unauthorized")
		return nil, ""
	case err != nil:
		writeError(w, http.StatusServiceUnavailable, "sessions are unavailable; try again")
		return nil, ""
	}
	if unsafeMethod(r.Method) {
		if msg := s.checkCSRF(r.Header.Get("Origin"), r.Header.Get(CSRFHeader), csrf); msg != "" {
			writeError(w, http.StatusForbidden, msg)
			return nil, ""
		}
	}
	return &p, csrf
}

func (s *server) sessionRead(w http.ResponseWriter, r *http.Request) {
	p, csrf := s.session(w, r)
	if p == nil {
		return
	}
	ms, err := auth.Memberships(r.Context(), s.DB, p.User)
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, "sessions are unavailable; try again")
		return
	}
	writeJSON(w, http.StatusOK, sessionView{Address: p.User, AccountID: p.AccountID, Role: p.Role,
		Network: string(p.Network), CSRFToken: csrf, Accounts: ms, LocalChain: s.Faucet != nil})
}

// sessionSwitch moves the session to another account of its address.
func (s *server) sessionSwitch(w http.ResponseWriter, r *http.Request) {
	p, _ := s.session(w, r)
	if p == nil {
		return
	}
	var body struct {
		AccountID uuid.UUID `json:"account_id"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<10)).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "malformed JSON body: want account_id")
		return
	}
	if err := auth.SwitchAccount(r.Context(), s.DB, p.SessionID, p.User, body.AccountID); err != nil {
		writeError(w, http.StatusNotFound, "account not found")
		return
	}
	r.Method = http.MethodGet
	s.sessionRead(w, r)
}

func (s *server) signOut(w http.ResponseWriter, r *http.Request) {
	p, _ := s.session(w, r)
	if p == nil {
		return
	}
	if err := auth.EndSession(r.Context(), s.DB, p.SessionID); err != nil {
		writeError(w, http.StatusServiceUnavailable, "sessions are unavailable; try again")
		return
	}
	if err := audit.Append(r.Context(), s.DB, audit.Entry{
		AccountID: p.AccountID,
		At:        time.Now(),
		Actor:     audit.Actor(p.ActorID()),
		Action:    audit.ActionSignedOut,
		Target:    string(audit.UserActor(p.User)),
		Details:   map[string]any{"session_id": p.SessionID},
	}); err != nil {
		s.log.ErrorContext(r.Context(), "audit a sign-out", "err", err)
	}
	http.SetCookie(w, &http.Cookie{Name: s.cookieName(), Value: "", Path: "/", HttpOnly: true, Secure: s.secureCookies(),
		SameSite: http.SameSiteStrictMode, MaxAge: -1})
	w.WriteHeader(http.StatusNoContent)
}
