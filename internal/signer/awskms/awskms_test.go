package awskms_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/uuid"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/awskms"
	"github.com/agentwallet/agentwallet/internal/signer/kmstest"
)

const region = "eu-west-1"

// staticCredentials are test credentials: with them the SDK never looks
// for others (environment, files, instance metadata).
var staticCredentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
	return aws.Credentials{AccessKeyID: "AKIAIOSFODNN7EXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", Source: "test"}, nil
})

func newSigner(t *testing.T, cfg awskms.Config) *awskms.Signer {
	t.Helper()
	cfg.Region = region
	if cfg.Credentials == nil {
		cfg.Credentials = staticCredentials
	}
	s, err := awskms.New(t.Context(), cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func kmsSigner(t *testing.T, k *kmstest.KMS) *awskms.Signer {
	t.Helper()
	return newSigner(t, awskms.Config{Endpoint: k.Endpoint})
}

func makeKey(t *testing.T, s *awskms.Signer) signer.Key {
	t.Helper()
	key, err := s.Make(t.Context(), uuid.NewString())
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	return key
}

func mustUnavailable(t *testing.T, err error, reason string) {
	t.Helper()
	u, ok := signer.Unavailable(err)
	if !ok {
		t.Fatalf("error = %v, want an UnavailableError", err)
	}
	t.Log(err)
	if u.Backend != signer.AWSKMS {
		t.Errorf("Backend = %q, want awskms", u.Backend)
	}
	if !strings.Contains(u.Reason, reason) {
		t.Errorf("Reason = %q, want it to mention %q", u.Reason, reason)
	}
}

func TestAWSKMS_MadeKeySignsAndVerifies(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)

	key, err := s.Make(t.Context(), uuid.NewString())
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	held, ok := k.Key(key.Ref)
	if !ok {
		t.Fatalf("KMS holds no key %s", key.Ref)
	}
	wantARN := "arn:aws:kms:" + region + ":" + kmstest.Account + ":key/" + held.ID
	if key.Backend != signer.AWSKMS || key.Ref != wantARN || len(key.Sealed.Ciphertext) != 0 {
		t.Fatalf("key = %+v, want backend awskms, ref %s, nothing sealed", key, wantARN)
	}
	if !key.Public.Equal(held.Public) {
		t.Errorf("public key %x, KMS holds %x", key.Public, held.Public)
	}

	message := []byte("a solana message to sign")
	sig, err := s.Sign(t.Context(), key, message)
	if err != nil {
		t.Fatalf("Sign: %v", err)
	}
	if !ed25519.Verify(key.Public, message, sig) {
		t.Fatal("signature does not verify against the key's public key")
	}
	sig, err = signer.For(s, key)(t.Context(), key.Public, message)
	if err != nil || !ed25519.Verify(key.Public, message, sig) {
		t.Fatalf("signer.For: %v", err)
	}
	if got := k.Signed(); got != 2 {
		t.Errorf("KMS signed %d times, want 2", got)
	}
}

func TestAWSKMS_KeyIsNamedByTheWalletsAlias(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)

	for _, tc := range []struct{ prefix, want string }{
		{"", "alias/agentwallet-"},
		{"prod/wallets-", "alias/prod/wallets-"},
	} {
		s := newSigner(t, awskms.Config{Endpoint: k.Endpoint, AliasPrefix: tc.prefix})
		name := uuid.NewString()
		key, err := s.Make(t.Context(), name)
		if err != nil {
			t.Fatalf("Make: %v", err)
		}
		alias := tc.want + name
		if s.Alias(name) != alias {
			t.Errorf("Alias(%s) = %s, want %s", name, s.Alias(name), alias)
		}
		byAlias, ok := k.Key(alias)
		if !ok {
			t.Fatalf("no key is named %s", alias)
		}
		if byAlias.ARN != key.Ref {
			t.Errorf("%s names %s, want %s", alias, byAlias.ARN, key.Ref)
		}
		if byAlias.Tags[awskms.WalletTag] != name {
			t.Errorf("tags = %v, want %s=%s", byAlias.Tags, awskms.WalletTag, name)
		}
		if !strings.Contains(byAlias.Description, name) {
			t.Errorf("description %q does not name the wallet", byAlias.Description)
		}
	}
}

func TestAWSKMS_MakeRefusesANameInUse(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)
	key := makeKey(t, s)
	held, _ := k.Key(key.Ref)
	name := strings.TrimPrefix(held.Aliases[0], "alias/"+awskms.DefaultAliasPrefix)

	_, err := s.Make(t.Context(), name)
	if !errors.Is(err, awskms.ErrNameInUse) {
		t.Fatalf("second Make: %v, want ErrNameInUse", err)
	}
	if n := len(k.Keys()); n != 1 {
		t.Errorf("KMS holds %d keys, want 1: a name in use makes no key", n)
	}

	for _, bad := range []string{"", "a/b", "../x", "a b", strings.Repeat("x", 129)} {
		if _, err := s.Make(t.Context(), bad); err == nil {
			t.Errorf("Make(%q) made a key", bad)
		}
	}
}

func TestAWSKMS_HalfMadeKeyIsScheduledForDeletion(t *testing.T) {
	t.Parallel()

	onlyKeyPendingDeletion := func(t *testing.T, k *kmstest.KMS) kmstest.KMSKey {
		t.Helper()
		keys := k.Keys()
		if len(keys) != 1 {
			t.Fatalf("KMS holds %d keys, want the 1 half-made", len(keys))
		}
		if keys[0].State != "PendingDeletion" || keys[0].PendingWindowInDays != 7 {
			t.Errorf("half-made key is %s (window %d days), want PendingDeletion in 7", keys[0].State, keys[0].PendingWindowInDays)
		}
		return keys[0]
	}

	t.Run("PublicKeyFails", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		k.Fail("GetPublicKey", "KMSInternalException")
		_, err := kmsSigner(t, k).Make(t.Context(), uuid.NewString())
		mustUnavailable(t, err, "internal")
		onlyKeyPendingDeletion(t, k)
	})

	t.Run("AliasFails", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		k.Fail("CreateAlias", "DependencyTimeoutException")
		_, err := kmsSigner(t, k).Make(t.Context(), uuid.NewString())
		mustUnavailable(t, err, "timed out")
		if key := onlyKeyPendingDeletion(t, k); len(key.Aliases) != 0 {
			t.Errorf("half-made key has aliases %v", key.Aliases)
		}
	})

	t.Run("NewKeyNotVisibleYet", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		k.Fail("CreateAlias", "NotFoundException")
		_, err := kmsSigner(t, k).Make(t.Context(), uuid.NewString())
		mustUnavailable(t, err, "not visible yet")
		onlyKeyPendingDeletion(t, k)
	})

	t.Run("AliasTakenInARace", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		s := kmsSigner(t, k)
		first := makeKey(t, s)
		held, _ := k.Key(first.Ref)
		name := strings.TrimPrefix(held.Aliases[0], "alias/"+awskms.DefaultAliasPrefix)

		// The alias is free when looked up, taken when made.
		k.Fail("DescribeKey", "NotFoundException")
		_, err := s.Make(t.Context(), name)
		if !errors.Is(err, awskms.ErrNameInUse) {
			t.Fatalf("Make: %v, want ErrNameInUse", err)
		}
		keys := k.Keys()
		if len(keys) != 2 || keys[0].State != "Enabled" || keys[1].State != "PendingDeletion" {
			t.Fatalf("keys = %+v, want the first enabled and the loser pending deletion", keys)
		}
		if got, _ := k.Key(held.Aliases[0]); got.ID != held.ID {
			t.Errorf("the alias moved to %s", got.ID)
		}
	})

	t.Run("DeletionFailsToo", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		k.Fail("GetPublicKey", "KMSInternalException")
		k.Fail("ScheduleKeyDeletion", "KMSInternalException")
		_, err := kmsSigner(t, k).Make(t.Context(), uuid.NewString())
		keys := k.Keys()
		if err == nil || len(keys) != 1 {
			t.Fatalf("Make: %v, keys %d", err, len(keys))
		}
		if !strings.Contains(err.Error(), "half-made") || !strings.Contains(err.Error(), keys[0].ARN) {
			t.Errorf("error %q does not name the half-made key %s", err, keys[0].ARN)
		}
	})
}

func TestAWSKMS_ThrottledIsUnavailableQuickly(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)
	key := makeKey(t, s)

	k.Throttle(true)
	before := k.Requests()
	start := time.Now()
	_, err := s.Sign(t.Context(), key, []byte("message"))
	elapsed := time.Since(start)
	mustUnavailable(t, err, "throttling")
	if elapsed > 2*time.Second {
		t.Errorf("a throttled KMS took %v to answer, want under 2s", elapsed)
	}
	if n := k.Requests() - before; n > 2 {
		t.Errorf("sign sent %d requests to a throttled KMS, want at most 2", n)
	}
	if k.Signed() != 0 {
		t.Errorf("KMS signed %d times while throttling", k.Signed())
	}

	_, err = s.Make(t.Context(), uuid.NewString())
	mustUnavailable(t, err, "throttling")
	mustUnavailable(t, s.Check(t.Context()), "throttling")

	k.Throttle(false)
	if _, err := s.Sign(t.Context(), key, []byte("message")); err != nil {
		t.Fatalf("Sign after throttling: %v", err)
	}
}

func TestAWSKMS_CannotSignNowIsUnavailable(t *testing.T) {
	t.Parallel()

	for _, tc := range []struct{ code, reason string }{
		{"KMSInternalException", "internal"},
		{"DependencyTimeoutException", "timed out"},
		{"KMSInvalidStateException", "state"},
		{"DisabledException", "disabled"},
		{"KeyUnavailableException", "unavailable"},
		{"AccessDeniedException", "denied"},
		{"UnrecognizedClientException", "credentials"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			t.Parallel()
			k := kmstest.NewKMS(t)
			s := kmsSigner(t, k)
			key := makeKey(t, s)
			k.Fail("Sign", tc.code)
			_, err := s.Sign(t.Context(), key, []byte("m"))
			mustUnavailable(t, err, tc.reason)
			if k.Signed() != 0 {
				t.Errorf("KMS signed %d times", k.Signed())
			}
		})
	}

	t.Run("KeyPendingDeletion", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		k.Fail("GetPublicKey", "KMSInternalException")
		s := kmsSigner(t, k)
		_, _ = s.Make(t.Context(), uuid.NewString())
		k.Fail("GetPublicKey", "")
		doomed := k.Keys()[0]
		key := signer.Key{Public: doomed.Public, Backend: signer.AWSKMS, Ref: doomed.ARN}
		_, err := s.Sign(t.Context(), key, []byte("m"))
		mustUnavailable(t, err, "state")
	})

	t.Run("Unreachable", func(t *testing.T) {
		t.Parallel()
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		s := newSigner(t, awskms.Config{Endpoint: srv.URL})
		start := time.Now()
		_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
		mustUnavailable(t, err, "cannot reach")
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("took %v", elapsed)
		}
	})

	t.Run("TooSlow", func(t *testing.T) {
		t.Parallel()
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body) // then a closed connection cancels r's context
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		t.Cleanup(slow.Close)
		s := newSigner(t, awskms.Config{Endpoint: slow.URL, Timeout: 300 * time.Millisecond})
		start := time.Now()
		_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
		mustUnavailable(t, err, "in time")
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("took %v, want the 300ms timeout to hold", elapsed)
		}
	})

	t.Run("NoCredentials", func(t *testing.T) {
		t.Parallel()
		k := kmstest.NewKMS(t)
		none := aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{}, errors.New("no credentials here")
		})
		s := newSigner(t, awskms.Config{Endpoint: k.Endpoint, Credentials: none})
		_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
		mustUnavailable(t, err, "credentials")
		if k.Requests() != 0 {
			t.Errorf("an unsigned request reached KMS")
		}
	})
}

func TestAWSKMS_MissingKeyIsAnErrorNotUnavailable(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)
	_, err := s.Sign(t.Context(), someKey(t), []byte("m"))
	if err == nil {
		t.Fatal("signed with a key KMS does not hold")
	}
	if _, ok := signer.Unavailable(err); ok {
		t.Errorf("error %v is an UnavailableError; a missing key is not fixed by retrying", err)
	}
}

func TestAWSKMS_SignRefusesWhatKMSCannotSign(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)
	key := makeKey(t, s)

	other := key
	other.Backend = signer.Vault
	for name, tc := range map[string]struct {
		key     signer.Key
		message []byte
	}{
		"AnotherBackendsKey": {other, []byte("m")},
		"EmptyMessage":       {key, nil},
		"OverlongMessage":    {key, make([]byte, 4097)},
	} {
		if _, err := s.Sign(t.Context(), tc.key, tc.message); err == nil {
			t.Errorf("%s: signed", name)
		}
	}
	if k.Signed() != 0 {
		t.Error("KMS was asked to sign")
	}
	if _, err := s.Sign(t.Context(), key, make([]byte, 4096)); err != nil {
		t.Errorf("a 4096-byte message: %v", err)
	}
}

func TestAWSKMS_RefusesASignatureByAnotherKey(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)
	key := makeKey(t, s)
	impostor := someKey(t)
	impostor.Ref = key.Ref // KMS signs with key's private key; impostor claims another public key
	_, err := s.Sign(t.Context(), impostor, []byte("m"))
	if !errors.Is(err, signer.ErrBadSignature) {
		t.Fatalf("error = %v, want ErrBadSignature", err)
	}
}

func TestAWSKMS_CheckListsOneKey(t *testing.T) {
	t.Parallel()
	k := kmstest.NewKMS(t)
	s := kmsSigner(t, k)
	if err := s.Check(t.Context()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	k.Fail("ListKeys", "AccessDeniedException")
	mustUnavailable(t, s.Check(t.Context()), "denied")
}

func TestNew_RefusesABadAliasPrefix(t *testing.T) {
	t.Parallel()
	for _, prefix := range []string{"aws/", "aws/x-", "has space", "semi;colon"} {
		_, err := awskms.New(t.Context(), awskms.Config{Region: region, AliasPrefix: prefix, Credentials: staticCredentials})
		if err == nil {
			t.Errorf("New accepted alias prefix %q", prefix)
		}
	}
}

// someKey is a key of the awskms backend that no server holds.
func someKey(t *testing.T) signer.Key {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer.Key{
		Public:  pub,
		Backend: signer.AWSKMS,
		Ref:     "arn:aws:kms:" + region + ":" + kmstest.Account + ":key/" + uuid.NewString(),
	}
}
