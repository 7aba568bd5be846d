package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/agentwallet/agentwallet/internal/signer"
	"github.com/agentwallet/agentwallet/internal/signer/awskms"
	"github.com/agentwallet/agentwallet/internal/signer/kmstest"
	"github.com/agentwallet/agentwallet/internal/signer/vault"
)

// A wallet whose key Vault Transit or AWS KMS holds (here the local
// servers that speak their documented protocols, with real Ed25519 keys)
// is made through a worker, keeps no secret in the database and pays on
// the localnet; with the key service down (Vault sealed, KMS throttling)
// a send answers 503 signer_unavailable and nothing is signed.
func TestKMS_WalletsOfVaultAndAWSKMSPay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		backend signer.Backend
		start   func(t *testing.T) (signer.Keeper, func(down bool), func() int)
	}{
		{signer.Vault, func(t *testing.T) (signer.Keeper, func(bool), func() int) {
			v := kmstest.NewVault(t)
			k, err := vault.New(vault.Config{Address: v.Addr, Token: v.Token})
			if err != nil {
				t.Fatal(err)
			}
			return k, v.Seal, v.Signed
		}},
		{signer.AWSKMS, func(t *testing.T) (signer.Keeper, func(bool), func() int) {
			s := kmstest.NewKMS(t)
			k, err := awskms.New(context.Background(), awskms.Config{Region: "eu-west-1", Endpoint: s.Endpoint,
				Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
					return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret", Source: "test"}, nil
				})})
			if err != nil {
				t.Fatal(err)
			}
			return k, s.Throttle, s.Signed
		}},
	} {
		t.Run(string(tc.backend), func(t *testing.T) {
			t.Parallel()
			keeper, down, signed := tc.start(t)
			e := newEnv(t, envOpts{keepers: map[signer.Backend]signer.Keeper{tc.backend: keeper}, walletSigner: tc.backend})
			eng, _ := e.startWorker()
			id, _ := e.agent(nil, 5_000_000)
			var backend string
			var sealed []byte
			if err := e.db.NewSelect().Table("wallets").Column("signer", "secret_sealed").Where("id = ?", id).
				Scan(context.Background(), &backend, &sealed); err != nil {
				t.Fatal(err)
			}
			if backend != string(tc.backend) || sealed != nil {
				t.Fatalf("wallet row: signer %s, %d sealed bytes", backend, len(sealed))
			}
			to := newAddress()
			status, sent := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 2})
			if status != http.StatusOK {
				t.Fatalf("send: %d %v", status, sent)
			}
			e.settle(eng, sent["signature"].(string), "confirmed")
			if got := e.chainUSDC(to); got != 2_000_000 {
				t.Fatalf("recipient holds %d", got)
			}

			down(true)
			before, signedBefore := e.countRows("transactions"), signed()
			start := time.Now()
			status, body := e.do("POST", fmt.Sprintf(sendPath, id), e.key, map[string]any{"to": to, "amount": 1})
			if status != http.StatusServiceUnavailable || body["reason"] != "signer_unavailable" {
				t.Fatalf("send with the key service down: %d %v", status, body)
			}
			if e.countRows("transactions") != before || signed() != signedBefore {
				t.Fatal("something was signed with the key service down")
			}
			t.Logf("answered %d in %v: %v", status, time.Since(start), body["error"])
			if status, body := e.do("POST", "/api/public/v1/agents", e.key, map[string]any{"label": "x"}); status != http.StatusServiceUnavailable {
				t.Fatalf("create with the key service down: %d %v", status, body)
			}
		})
	}
}
