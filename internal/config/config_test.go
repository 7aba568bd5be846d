package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestLoadAPIDefaults(t *testing.T) {
	t.Parallel()
	_, pub, _ := signer.GenerateMasterKey()
	c, err := LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub}))
	if err != nil {
		t.Fatal(err)
	}
	if c.DatabaseURL != DefaultDatabaseURL || c.Redis.URL != DefaultRedisURL || c.Redis.Sentinels != nil || c.HTTPAddr != DefaultHTTPAddr {
		t.Fatalf("defaults not applied: %+v", c)
	}
}

func TestErrorsNameTheVariable(t *testing.T) {
	t.Parallel()
	priv, pub, _ := signer.GenerateMasterKey()
	cases := []struct {
		name string
		env  map[string]string
		want string
		load func(Getenv) error
	}{
		{"missing public key", map[string]string{}, "WALLET_PUBLIC_KEY", apiLoader},
		{"bad public key", map[string]string{"WALLET_PUBLIC_KEY": "nope"}, "WALLET_PUBLIC_KEY", apiLoader},
		{"bad database url", map[string]string{"WALLET_PUBLIC_KEY": pub, "DATABASE_URL": "mysql://x/y"}, "DATABASE_URL", apiLoader},
		{"bad redis url", map[string]string{"WALLET_PUBLIC_KEY": pub, "REDIS_URL": "::"}, "REDIS_URL", apiLoader},
		{"bad redis db", map[string]string{"WALLET_PUBLIC_KEY": pub, "REDIS_URL": "redis://127.0.0.1:6379/x"}, "REDIS_URL", apiLoader},
		{"bad rpc url", map[string]string{"WALLET_PUBLIC_KEY": pub, "SOLANA_RPC_URL_MAINNET": "ftp://x"}, "SOLANA_RPC_URL_MAINNET", apiLoader},
		{"bad addr", map[string]string{"WALLET_PUBLIC_KEY": pub, "HTTP_ADDR": "8080"}, "HTTP_ADDR", apiLoader},
		{"half ops creds", map[string]string{"WALLET_PUBLIC_KEY": pub, "OPS_USERNAME": "ops"}, "OPS_PASSWORD", apiLoader},
		{"bad log level", map[string]string{"WALLET_PUBLIC_KEY": pub, "LOG_LEVEL": "loud"}, "LOG_LEVEL", apiLoader},
		{"bad timeout", map[string]string{"WALLET_PUBLIC_KEY": pub, "SOLANA_RPC_TIMEOUT": "-1s"}, "SOLANA_RPC_TIMEOUT", apiLoader},
		{"missing master key", map[string]string{}, "WALLET_MASTER_KEY", workerLoader},
		{"public key as master key list", map[string]string{"WALLET_MASTER_KEY": priv + ",xx"}, "WALLET_MASTER_KEY", workerLoader},
		{"empty queue name", map[string]string{"WALLET_MASTER_KEY": priv, "WORKER_QUEUES": "payments,,default"}, "WORKER_QUEUES", workerLoader},
		{"bad queue name", map[string]string{"WALLET_MASTER_KEY": priv, "WORKER_QUEUES": "pay ments"}, "WORKER_QUEUES", workerLoader},
		{"bad concurrency", map[string]string{"WALLET_MASTER_KEY": priv, "WORKER_CONCURRENCY": "0"}, "WORKER_CONCURRENCY", workerLoader},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.load(env(tc.env))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %s", err, tc.want)
			}
		})
	}
}

func TestSecretsNotInErrors(t *testing.T) {
	t.Parallel()
	_, pub, _ := signer.GenerateMasterKey()
	_, err := LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub, "DATABASE_URL": "postgres://u:hunter2@/db"}))
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %v leaks or misses the password", err)
	}
}

func apiLoader(g Getenv) error    { _, err := LoadAPI(g); return err }
func workerLoader(g Getenv) error { _, err := LoadWorker(g); return err }

func TestSecretsArePrintedRedacted(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	c, err := LoadWorker(env(map[string]string{"WALLET_MASTER_KEY": priv}))
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("config", "cfg", c, "key", c.WalletMasterKey)
	for _, s := range []string{fmt.Sprint(c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), buf.String()} {
		if strings.Contains(s, priv) {
			t.Fatalf("secret printed: %s", s)
		}
	}
	if c.WalletMasterKey.Reveal() != priv {
		t.Fatal("Reveal lost the value")
	}
}
