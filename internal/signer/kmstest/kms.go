package kmstest

import (
	"crypto"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
)

// Account is the AWS account id of the KMS test server's keys.
const Account = "111122223333"

const amzJSON = "application/x-amz-json-1.1"

// KMS is an in-memory AWS KMS speaking the AWS JSON 1.1 protocol (POST /,
// X-Amz-Target: TrentService.<Operation>, blobs base64 in the JSON,
// errors as {"__type": ..., "message": ...}). It makes
// ECC_NIST_EDWARDS25519 SIGN_VERIFY keys only and answers CreateKey,
// CreateAlias, DescribeKey, GetPublicKey, Sign, ListKeys and
// ScheduleKeyDeletion as the KMS API reference describes them. A request
// must carry a SigV4 Authorization header, whose signature is not checked;
// its credential scope names the region of the keys' ARNs.
type KMS struct {
	// Endpoint is the server's URL, for the client's base endpoint.
	Endpoint string

	mu       sync.Mutex
	keys     map[string]*kmsKey // by key id
	order    []string           // key ids, oldest first, for ListKeys
	aliases  map[string]string  // alias name (alias/...) to key id
	throttle bool
	fail     map[string]string // operation to error type

	signed   atomic.Int64
	requests atomic.Int64
}

type kmsKey struct {
	id, arn     string
	description string
	tags        map[string]string
	priv        ed25519.PrivateKey
	created     time.Time
	state       string
	deletion    time.Time
	pendingDays int
}

// KMSKey is what the KMS test server holds for a key, for a test's
// assertions. It carries the public key only.
type KMSKey struct {
	ID, ARN     string
	Description string
	Tags        map[string]string
	Aliases     []string
	// State is Enabled or PendingDeletion.
	State string
	// PendingWindowInDays is the deletion's waiting period, if scheduled.
	PendingWindowInDays int
	Public              ed25519.PublicKey
}

// NewKMS starts a KMS test server holding no keys. It stops when the test
// ends.
func NewKMS(t testing.TB) *KMS {
	t.Helper()
	k := &KMS{keys: map[string]*kmsKey{}, aliases: map[string]string{}, fail: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(k.serve))
	t.Cleanup(srv.Close)
	k.Endpoint = srv.URL
	return k
}

// Throttle makes every request answer 400 ThrottlingException, as KMS
// does past a request quota.
func (k *KMS) Throttle(on bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.throttle = on
}

// Fail makes every request for operation op (such as "GetPublicKey")
// answer the error errType (such as "KMSInternalException"), until called
// again with errType "".
func (k *KMS) Fail(op, errType string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if errType == "" {
		delete(k.fail, op)
		return
	}
	k.fail[op] = errType
}

// Signed counts the signatures the server has made.
func (k *KMS) Signed() int { return int(k.signed.Load()) }

// Requests counts the HTTP requests the server has answered.
func (k *KMS) Requests() int { return int(k.requests.Load()) }

// Key reports what the server holds for the key ref names: a key id, key
// ARN, alias name or alias ARN.
func (k *KMS) Key(ref string) (KMSKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, _, _ := k.resolve(ref)
	if key == nil {
		return KMSKey{}, false
	}
	return k.snapshot(key), true
}

// Keys lists every key the server holds, oldest first.
func (k *KMS) Keys() []KMSKey {
	k.mu.Lock()
	defer k.mu.Unlock()
	var keys []KMSKey
	for _, id := range k.order {
		keys = append(keys, k.snapshot(k.keys[id]))
	}
	return keys
}

func (k *KMS) snapshot(key *kmsKey) KMSKey {
	s := KMSKey{
		ID: key.id, ARN: key.arn, Description: key.description, State: key.state,
		PendingWindowInDays: key.pendingDays, Tags: map[string]string{},
		Public: key.priv.Public().(ed25519.PublicKey),
	}
	for tk, tv := range key.tags {
		s.Tags[tk] = tv
	}
	for alias, id := range k.aliases {
		if id == key.id {
			s.Aliases = append(s.Aliases, alias)
		}
	}
	return s
}

// kmsError is an error as KMS answers it.
type kmsError struct {
	status int
	typ    string
	msg    string
}

func errorOf(typ, format string, args ...any) *kmsError {
	status := http.StatusBadRequest
	if typ == "KMSInternalException" || typ == "DependencyTimeoutException" {
		status = http.StatusInternalServerError
	}
	return &kmsError{status: status, typ: typ, msg: fmt.Sprintf(format, args...)}
}

// scope is "AWS4-HMAC-SHA256 Credential=<id>/<date>/<region>/<service>/aws4_request, ...".
var scope = regexp.MustCompile(`^AWS4-HMAC-SHA256 Credential=[^/]+/\d{8}/([a-z0-9-]+)/([a-z0-9-]+)/aws4_request,`)

func (k *KMS) serve(w http.ResponseWriter, r *http.Request) {
	k.requests.Add(1)
	w.Header().Set("X-Amzn-RequestId", uuid.NewString())
	out, kerr := k.handle(r)
	if kerr != nil {
		writeJSON(w, amzJSON, kerr.status, map[string]string{"__type": kerr.typ, "message": kerr.msg})
		return
	}
	if out == nil {
		w.Header().Set("Content-Type", amzJSON)
		w.WriteHeader(http.StatusOK)
		return
	}
	writeJSON(w, amzJSON, http.StatusOK, out)
}

func (k *KMS) handle(r *http.Request) (any, *kmsError) {
	if r.Method != http.MethodPost || r.URL.Path != "/" {
		return nil, errorOf("UnknownOperationException", "")
	}
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return nil, &kmsError{http.StatusBadRequest, "MissingAuthenticationTokenException", "Missing Authentication Token"}
	}
	m := scope.FindStringSubmatch(auth)
	if m == nil || m[2] != "kms" {
		return nil, errorOf("IncompleteSignatureException", "Authorization header is not a SigV4 signature for kms")
	}
	region := m[1]
	if ct := r.Header.Get("Content-Type"); ct != amzJSON {
		return nil, errorOf("SerializationException", "Content-Type %q is not %s", ct, amzJSON)
	}
	op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "TrentService.")
	if !ok {
		return nil, errorOf("UnknownOperationException", "")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		return nil, errorOf("SerializationException", "%v", err)
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	if k.throttle {
		return nil, errorOf("ThrottlingException", "Rate exceeded")
	}
	if typ, ok := k.fail[op]; ok {
		return nil, errorOf(typ, "%s failed (injected by the test)", op)
	}
	switch op {
	case "CreateKey":
		return handleOp(body, func(in createKeyInput) (any, *kmsError) { return k.createKey(region, in) })
	case "CreateAlias":
		return handleOp(body, func(in createAliasInput) (any, *kmsError) { return nil, k.createAlias(region, in) })
	case "DescribeKey":
		return handleOp(body, func(in keyIDInput) (any, *kmsError) { return k.describeKey(in) })
	case "GetPublicKey":
		return handleOp(body, func(in keyIDInput) (any, *kmsError) { return k.getPublicKey(in) })
	case "Sign":
		return handleOp(body, func(in signInput) (any, *kmsError) { return k.sign(in) })
	case "ListKeys":
		return handleOp(body, func(in listKeysInput) (any, *kmsError) { return k.listKeys(in) })
	case "ScheduleKeyDeletion":
		return handleOp(body, func(in scheduleInput) (any, *kmsError) { return k.scheduleDeletion(in) })
	}
	return nil, errorOf("UnknownOperationException", "")
}

func handleOp[In any](body []byte, f func(In) (any, *kmsError)) (any, *kmsError) {
	var in In
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, errorOf("SerializationException", "%v", err)
	}
	return f(in)
}

type tag struct {
	TagKey   string `json:"TagKey"`
	TagValue string `json:"TagValue"`
}

type createKeyInput struct {
	Description string `json:"Description"`
	KeyUsage    string `json:"KeyUsage"`
	KeySpec     string `json:"KeySpec"`
	Origin      string `json:"Origin"`
	MultiRegion bool   `json:"MultiRegion"`
	Tags        []tag  `json:"Tags"`
}

type createAliasInput struct {
	AliasName   string `json:"AliasName"`
	TargetKeyID string `json:"TargetKeyId"`
}

type keyIDInput struct {
	KeyID string `json:"KeyId"`
}

type signInput struct {
	KeyID            string `json:"KeyId"`
	Message          []byte `json:"Message"`
	MessageType      string `json:"MessageType"`
	SigningAlgorithm string `json:"SigningAlgorithm"`
	DryRun           bool   `json:"DryRun"`
}

type listKeysInput struct {
	Limit  int    `json:"Limit"`
	Marker string `json:"Marker"`
}

type scheduleInput struct {
	KeyID               string `json:"KeyId"`
	PendingWindowInDays int    `json:"PendingWindowInDays"`
}

const (
	edwards25519 = "ECC_NIST_EDWARDS25519"
	signVerify   = "SIGN_VERIFY"
	ed25519Pure  = "ED25519_SHA_512"
	ed25519Ph    = "ED25519_PH_SHA_512"
)

func (k *KMS) createKey(region string, in createKeyInput) (any, *kmsError) {
	if in.KeySpec == "" {
		in.KeySpec = "SYMMETRIC_DEFAULT"
	}
	if in.KeySpec != edwards25519 {
		return nil, errorOf("UnsupportedOperationException", "this test server makes %s keys only, not %s", edwards25519, in.KeySpec)
	}
	if in.KeyUsage == "" {
		in.KeyUsage = "ENCRYPT_DECRYPT"
	}
	if in.KeyUsage != signVerify {
		return nil, errorOf("ValidationException", "KeyUsage %s is not compatible with KeySpec %s", in.KeyUsage, in.KeySpec)
	}
	if in.Origin != "" && in.Origin != "AWS_KMS" {
		return nil, errorOf("UnsupportedOperationException", "this test server makes AWS_KMS keys only")
	}
	if in.MultiRegion {
		return nil, errorOf("UnsupportedOperationException", "this test server makes single-Region keys only")
	}
	if len(in.Description) > 8192 {
		return nil, errorOf("ValidationException", "Description is longer than 8192")
	}
	tags := map[string]string{}
	for _, t := range in.Tags {
		if t.TagKey == "" || len(t.TagKey) > 128 || len(t.TagValue) > 256 || strings.HasPrefix(t.TagKey, "aws:") {
			return nil, errorOf("TagException", "tag key %q or its value is not allowed", t.TagKey)
		}
		tags[t.TagKey] = t.TagValue
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, errorOf("KMSInternalException", "%v", err)
	}
	id := uuid.NewString()
	key := &kmsKey{
		id: id, arn: fmt.Sprintf("arn:aws:kms:%s:%s:key/%s", region, Account, id),
		description: in.Description, tags: tags, priv: priv,
		created: time.Now().UTC(), state: "Enabled",
	}
	k.keys[id] = key
	k.order = append(k.order, id)
	return map[string]any{"KeyMetadata": metadata(key)}, nil
}

var aliasName = regexp.MustCompile(`^alias/[a-zA-Z0-9/_-]{1,250}$`)

func (k *KMS) createAlias(region string, in createAliasInput) *kmsError {
	if !aliasName.MatchString(in.AliasName) {
		return errorOf("ValidationException", "1 validation error detected: Value '%s' at 'aliasName' failed to satisfy constraint", in.AliasName)
	}
	if strings.HasPrefix(in.AliasName, "alias/aws/") {
		return errorOf("NotAuthorizedException", "alias/aws/ names are reserved for AWS managed keys")
	}
	if strings.HasPrefix(in.TargetKeyID, "alias/") || strings.Contains(in.TargetKeyID, ":alias/") {
		return errorOf("ValidationException", "TargetKeyId must name a key, not an alias")
	}
	key, typ, msg := k.resolve(in.TargetKeyID)
	if key == nil {
		return errorOf(typ, "%s", msg)
	}
	if _, ok := k.aliases[in.AliasName]; ok {
		return errorOf("AlreadyExistsException", "An alias with the name arn:aws:kms:%s:%s:%s already exists", region, Account, in.AliasName)
	}
	if key.state != "Enabled" {
		return errorOf("KMSInvalidStateException", "%s is %s.", key.arn, pendingDeletion)
	}
	k.aliases[in.AliasName] = key.id
	return nil
}

const pendingDeletion = "pending deletion"

func (k *KMS) describeKey(in keyIDInput) (any, *kmsError) {
	key, typ, msg := k.resolve(in.KeyID)
	if key == nil {
		return nil, errorOf(typ, "%s", msg)
	}
	return map[string]any{"KeyMetadata": metadata(key)}, nil
}

func (k *KMS) getPublicKey(in keyIDInput) (any, *kmsError) {
	key, kerr := k.usable(in.KeyID)
	if kerr != nil {
		return nil, kerr
	}
	der, err := x509.MarshalPKIXPublicKey(key.priv.Public())
	if err != nil {
		return nil, errorOf("KMSInternalException", "%v", err)
	}
	return map[string]any{
		"KeyId":                 key.arn,
		"PublicKey":             der,
		"KeySpec":               edwards25519,
		"CustomerMasterKeySpec": edwards25519,
		"KeyUsage":              signVerify,
		"SigningAlgorithms":     []string{ed25519Pure, ed25519Ph},
	}, nil
}

// sign signs as KMS does for an Ed25519 key: ED25519_SHA_512 (PureEdDSA)
// takes a RAW message; ED25519_PH_SHA_512 (HashEdDSA) takes a 64-byte
// DIGEST, which KMS hashes once more.
func (k *KMS) sign(in signInput) (any, *kmsError) {
	if len(in.Message) == 0 || len(in.Message) > 4096 {
		return nil, errorOf("ValidationException", "1 validation error detected: Value at 'message' failed to satisfy constraint: Member must have length between 1 and 4096")
	}
	if in.MessageType == "" {
		in.MessageType = "RAW"
	}
	key, kerr := k.usable(in.KeyID)
	if kerr != nil {
		return nil, kerr
	}
	var digest []byte // nil: PureEdDSA over the message
	switch {
	case in.SigningAlgorithm == ed25519Pure && in.MessageType == "RAW":
	case in.SigningAlgorithm == ed25519Pure:
		return nil, errorOf("ValidationException", "The %s signing algorithm requires MessageType RAW", ed25519Pure)
	case in.SigningAlgorithm == ed25519Ph && in.MessageType == "DIGEST":
		if len(in.Message) != sha512.Size {
			return nil, errorOf("ValidationException", "Digest is invalid length for algorithm %s", ed25519Ph)
		}
		sum := sha512.Sum512(in.Message)
		digest = sum[:]
	case in.SigningAlgorithm == ed25519Ph:
		return nil, errorOf("ValidationException", "The %s signing algorithm requires MessageType DIGEST", ed25519Ph)
	default:
		return nil, errorOf("InvalidKeyUsageException", "%s is not a valid signing algorithm for %s", in.SigningAlgorithm, key.arn)
	}
	if in.DryRun {
		return nil, errorOf("DryRunOperationException", "The request would have succeeded, but the DryRun option is set.")
	}
	sig := ed25519.Sign(key.priv, in.Message)
	if digest != nil {
		ph, err := key.priv.Sign(nil, digest, &ed25519.Options{Hash: crypto.SHA512})
		if err != nil {
			return nil, errorOf("KMSInternalException", "%v", err)
		}
		sig = ph
	}
	k.signed.Add(1)
	return map[string]any{"KeyId": key.arn, "Signature": sig, "SigningAlgorithm": in.SigningAlgorithm}, nil
}

func (k *KMS) listKeys(in listKeysInput) (any, *kmsError) {
	limit := in.Limit
	if limit == 0 {
		limit = 100
	}
	if limit < 1 || limit > 1000 {
		return nil, errorOf("ValidationException", "Limit must be between 1 and 1000")
	}
	start := 0
	if in.Marker != "" {
		n, err := strconv.Atoi(in.Marker)
		if err != nil || n < 0 || n > len(k.order) {
			return nil, errorOf("InvalidMarkerException", "marker %q is not valid", in.Marker)
		}
		start = n
	}
	end := min(start+limit, len(k.order))
	keys := []map[string]string{}
	for _, id := range k.order[start:end] {
		keys = append(keys, map[string]string{"KeyId": id, "KeyArn": k.keys[id].arn})
	}
	out := map[string]any{"Keys": keys, "Truncated": end < len(k.order)}
	if end < len(k.order) {
		out["NextMarker"] = strconv.Itoa(end)
	}
	return out, nil
}

func (k *KMS) scheduleDeletion(in scheduleInput) (any, *kmsError) {
	days := in.PendingWindowInDays
	if days == 0 {
		days = 30
	}
	if days < 7 || days > 30 {
		return nil, errorOf("ValidationException", "PendingWindowInDays must be between 7 and 30")
	}
	key, kerr := k.usable(in.KeyID)
	if kerr != nil {
		return nil, kerr
	}
	key.state = "PendingDeletion"
	key.pendingDays = days
	key.deletion = time.Now().UTC().Add(time.Duration(days) * 24 * time.Hour)
	return map[string]any{
		"KeyId":               key.arn,
		"DeletionDate":        epoch(key.deletion),
		"KeyState":            key.state,
		"PendingWindowInDays": days,
	}, nil
}

// usable resolves ref to a key in a state to be used: not pending deletion.
func (k *KMS) usable(ref string) (*kmsKey, *kmsError) {
	key, typ, msg := k.resolve(ref)
	if key == nil {
		return nil, errorOf(typ, "%s", msg)
	}
	if key.state != "Enabled" {
		return nil, errorOf("KMSInvalidStateException", "%s is %s.", key.arn, pendingDeletion)
	}
	return key, nil
}

// resolve finds the key ref names (key id, key ARN, alias name, alias
// ARN), or says which error KMS would answer.
func (k *KMS) resolve(ref string) (*kmsKey, string, string) {
	if ref == "" {
		return nil, "ValidationException", "1 validation error detected: Value null at 'keyId' failed to satisfy constraint: Member must not be null"
	}
	id := ref
	if rest, ok := strings.CutPrefix(ref, "arn:aws:kms:"); ok {
		// <region>:<account>:key/<id> or <region>:<account>:alias/<name>
		parts := strings.SplitN(rest, ":", 3)
		if len(parts) != 3 || parts[1] != Account {
			return nil, "NotFoundException", fmt.Sprintf("Invalid arn %s", ref)
		}
		id = parts[2]
	}
	if strings.HasPrefix(id, "alias/") {
		target, ok := k.aliases[id]
		if !ok {
			return nil, "NotFoundException", fmt.Sprintf("Alias %s is not found.", ref)
		}
		id = target
	} else {
		id = strings.TrimPrefix(id, "key/")
	}
	key, ok := k.keys[id]
	if !ok || (strings.HasPrefix(ref, "arn:") && !strings.Contains(ref, ":alias/") && key.arn != ref) {
		return nil, "NotFoundException", fmt.Sprintf("Key '%s' does not exist", ref)
	}
	return key, "", ""
}

func metadata(key *kmsKey) map[string]any {
	m := map[string]any{
		"AWSAccountId":          Account,
		"KeyId":                 key.id,
		"Arn":                   key.arn,
		"CreationDate":          epoch(key.created),
		"Enabled":               key.state == "Enabled",
		"Description":           key.description,
		"KeyUsage":              signVerify,
		"KeyState":              key.state,
		"Origin":                "AWS_KMS",
		"KeyManager":            "CUSTOMER",
		"CustomerMasterKeySpec": edwards25519,
		"KeySpec":               edwards25519,
		"SigningAlgorithms":     []string{ed25519Pure, ed25519Ph},
		"MultiRegion":           false,
	}
	if key.state == "PendingDeletion" {
		m["DeletionDate"] = epoch(key.deletion)
		m["PendingDeletionWindowInDays"] = key.pendingDays
	}
	return m
}

// epoch is a timestamp as AWS JSON writes it: seconds since the epoch.
func epoch(t time.Time) json.Number {
	return json.Number(strconv.FormatFloat(float64(t.UnixMilli())/1000, 'f', 3, 64))
}
