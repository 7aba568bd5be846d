package kmstest_test

import (
	"bytes"
	"crypto"
	"crypto/ed25519"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer/kmstest"
)

// call sends one HTTP request and decodes the JSON answer.
func call(t *testing.T, method, url string, header map[string]string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, &buf)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, resp.Header, out
}

func kmsCall(t *testing.T, k *kmstest.KMS, op string, body any) (int, http.Header, map[string]any) {
	t.Helper()
	return call(t, http.MethodPost, k.Endpoint+"/", map[string]string{
		"X-Amz-Target":  "TrentService." + op,
		"Content-Type":  "application/x-amz-json-1.1",
		"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-2/kms/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=00",
	}, body)
}

func TestKMS_SpeaksTheJSONProtocol(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)

	status, header, out := kmsCall(t, k, "CreateKey", map[string]any{
		"KeySpec": "ECC_NIST_EDWARDS25519", "KeyUsage": "SIGN_VERIFY",
	})
	if status != http.StatusOK || header.Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Fatalf("CreateKey answered %d %q: %v", status, header.Get("Content-Type"), out)
	}
	meta, _ := out["KeyMetadata"].(map[string]any)
	arn, _ := meta["Arn"].(string)
	if !strings.HasPrefix(arn, "arn:aws:kms:us-east-2:111122223333:key/") || meta["KeyId"] != strings.TrimPrefix(arn, "arn:aws:kms:us-east-2:111122223333:key/") {
		t.Fatalf("KeyMetadata = %v: want an ARN in the request's region naming the key id", meta)
	}
	if _, ok := meta["CreationDate"].(float64); !ok {
		t.Errorf("CreationDate = %v, want epoch seconds", meta["CreationDate"])
	}

	_, _, out = kmsCall(t, k, "GetPublicKey", map[string]any{"KeyId": arn})
	der, err := base64.StdEncoding.DecodeString(out["PublicKey"].(string))
	if err != nil {
		t.Fatalf("PublicKey is not base64: %v", err)
	}
	parsed, err := x509.ParsePKIXPublicKey(der)
	pub, ok := parsed.(ed25519.PublicKey)
	if err != nil || !ok {
		t.Fatalf("PublicKey is not a DER Ed25519 SubjectPublicKeyInfo: %v", err)
	}

	status, _, out = kmsCall(t, k, "Sign", map[string]any{
		"KeyId": arn, "Message": base64.StdEncoding.EncodeToString([]byte("m")),
		"MessageType": "RAW", "SigningAlgorithm": "ED25519_SHA_512",
	})
	sig, _ := base64.StdEncoding.DecodeString(out["Signature"].(string))
	if status != http.StatusOK || !ed25519.Verify(pub, []byte("m"), sig) {
		t.Fatalf("Sign answered %d, %v", status, out)
	}

	status, _, out = kmsCall(t, k, "DescribeKey", map[string]any{"KeyId": "alias/none"})
	if status != http.StatusBadRequest || out["__type"] != "NotFoundException" || out["message"] == "" {
		t.Errorf("a missing alias answered %d %v, want 400 NotFoundException with a message", status, out)
	}
}

func TestKMS_RefusesPrehashedAlgorithmForARawMessage(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	_, _, out := kmsCall(t, k, "CreateKey", map[string]any{"KeySpec": "ECC_NIST_EDWARDS25519", "KeyUsage": "SIGN_VERIFY"})
	id := out["KeyMetadata"].(map[string]any)["KeyId"].(string)

	message := base64.StdEncoding.EncodeToString([]byte("a raw message"))
	status, _, out := kmsCall(t, k, "Sign", map[string]any{
		"KeyId": id, "Message": message, "MessageType": "RAW", "SigningAlgorithm": "ED25519_PH_SHA_512",
	})
	if status != http.StatusBadRequest || out["__type"] != "ValidationException" {
		t.Errorf("ED25519_PH_SHA_512 over RAW answered %d %v, want 400 ValidationException", status, out)
	}
	status, _, out = kmsCall(t, k, "Sign", map[string]any{
		"KeyId": id, "Message": message, "MessageType": "DIGEST", "SigningAlgorithm": "ED25519_SHA_512",
	})
	if status != http.StatusBadRequest || out["__type"] != "ValidationException" {
		t.Errorf("ED25519_SHA_512 over DIGEST answered %d %v, want 400 ValidationException", status, out)
	}
	if k.Signed() != 0 {
		t.Errorf("signed %d times", k.Signed())
	}

	// HashEdDSA over a digest, which KMS hashes once more.
	digest := sha512.Sum512([]byte("a raw message"))
	status, _, out = kmsCall(t, k, "Sign", map[string]any{
		"KeyId": id, "Message": base64.StdEncoding.EncodeToString(digest[:]), "MessageType": "DIGEST", "SigningAlgorithm": "ED25519_PH_SHA_512",
	})
	if status != http.StatusOK {
		t.Fatalf("ED25519_PH_SHA_512 over DIGEST answered %d %v", status, out)
	}
	sig, _ := base64.StdEncoding.DecodeString(out["Signature"].(string))
	held, _ := k.Key(id)
	again := sha512.Sum512(digest[:])
	if err := ed25519.VerifyWithOptions(held.Public, again[:], sig, &ed25519.Options{Hash: crypto.SHA512}); err != nil {
		t.Errorf("prehashed signature: %v", err)
	}
}

func TestKMS_RequiresAnAuthorizationHeader(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	status, _, out := call(t, http.MethodPost, k.Endpoint+"/", map[string]string{
		"X-Amz-Target": "TrentService.ListKeys",
		"Content-Type": "application/x-amz-json-1.1",
	}, map[string]any{})
	if status != http.StatusBadRequest || out["__type"] != "MissingAuthenticationTokenException" {
		t.Errorf("an unsigned request answered %d %v", status, out)
	}
}

func TestKMS_ThrottledAnswersThrottlingException(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	k.Throttle(true)
	status, _, out := kmsCall(t, k, "ListKeys", map[string]any{"Limit": 1})
	if status != http.StatusBadRequest || out["__type"] != "ThrottlingException" {
		t.Errorf("throttled ListKeys answered %d %v", status, out)
	}
}

func vaultCall(t *testing.T, v *kmstest.Vault, method, path string, body any) (int, map[string]any) {
	t.Helper()
	status, _, out := call(t, method, v.Addr+"/v1/"+path, map[string]string{"X-Vault-Token": v.Token}, body)
	return status, out
}

func TestVault_AnswersAsVaultDocuments(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)

	status, out := vaultCall(t, v, http.MethodPost, "transit/keys/k1", map[string]any{"type": "ed25519"})
	if status != http.StatusOK {
		t.Fatalf("create answered %d %v", status, out)
	}
	status, out = vaultCall(t, v, http.MethodGet, "transit/keys/k1", nil)
	data, _ := out["data"].(map[string]any)
	keys, _ := data["keys"].(map[string]any)
	v1, _ := keys["1"].(map[string]any)
	pub, err := base64.StdEncoding.DecodeString(v1["public_key"].(string))
	if status != http.StatusOK || data["type"] != "ed25519" || data["latest_version"] != 1.0 || err != nil || len(pub) != 32 {
		t.Fatalf("read answered %d %v", status, out)
	}

	status, out = vaultCall(t, v, http.MethodPut, "transit/sign/k1", map[string]any{
		"input": base64.StdEncoding.EncodeToString([]byte("m")), "key_version": 1,
	})
	sigText, _ := out["data"].(map[string]any)["signature"].(string)
	sig, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sigText, "vault:v1:"))
	if status != http.StatusOK || !strings.HasPrefix(sigText, "vault:v1:") || !ed25519.Verify(pub, []byte("m"), sig) {
		t.Fatalf("sign answered %d %v", status, out)
	}

	status, out = vaultCall(t, v, http.MethodPost, "transit/sign/k1", map[string]any{"input": "bQ==", "key_version": 2})
	if status != http.StatusBadRequest || len(out["errors"].([]any)) != 1 {
		t.Errorf("sign with a version not made answered %d %v", status, out)
	}
	status, out = vaultCall(t, v, http.MethodGet, "transit/export/signing-key/k1", nil)
	if status != http.StatusBadRequest {
		t.Errorf("export of a non-exportable key answered %d %v", status, out)
	}
	status, out = vaultCall(t, v, http.MethodGet, "transit/keys/none", nil)
	if status != http.StatusNotFound || out["errors"] == nil {
		t.Errorf("read of a missing key answered %d %v", status, out)
	}
	if v.Signed() != 1 {
		t.Errorf("signed %d times, want 1", v.Signed())
	}
}

func TestVault_SealedAnswersAsVaultDoes(t *testing.T) {
	t.Parallel()
	v := kmstest.NewVault(t)
	v.Seal(true)

	status, out := vaultCall(t, v, http.MethodGet, "transit/keys/k1", nil)
	if errs, _ := out["errors"].([]any); status != http.StatusServiceUnavailable || len(errs) != 1 || errs[0] != "Vault is sealed" {
		t.Errorf("sealed read answered %d %v", status, out)
	}
	status, out = vaultCall(t, v, http.MethodGet, "sys/health", nil)
	if status != http.StatusServiceUnavailable || out["sealed"] != true {
		t.Errorf("sealed health answered %d %v", status, out)
	}
	status, _ = vaultCall(t, v, http.MethodGet, "sys/health?sealedcode=299", nil)
	if status != 299 {
		t.Errorf("sealed health with sealedcode=299 answered %d", status)
	}
}
