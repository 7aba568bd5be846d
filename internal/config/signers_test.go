package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentwallet/agentwallet/internal/signer"
)

// WALLET_SIGNER and each backend's settings: the default is local; a
// backend is configured when its settings are there, whatever the
// default; the default's settings are required; a secret comes from its
// variable or its file, never both; and no secret is in an error. Vault may go without a token (an agent adds it).
func TestSigners_ReadAndValidated(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	pinFile := filepath.Join(t.TempDir(), "pin")
	if err := os.WriteFile(pinFile, []byte("1234-from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pkcs11 := map[string]string{"PKCS11_MODULE": "/usr/lib/softhsm/libsofthsm2.so", "PKCS11_TOKEN_LABEL": "wallets", "PKCS11_PIN": "s3cret-pin"}
	with := func(sets ...map[string]string) map[string]string {
		m := map[string]string{"WALLET_MASTER_KEY": priv}
		for _, s := range sets {
			for k, v := range s {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		want    func(Signers) bool
		failsOn string // the variable an error names; "" for none
	}{
		{"local by default", with(), func(s Signers) bool {
			return s.Default == signer.Local && !s.Configured(signer.PKCS11) && !s.Configured(signer.Vault) && !s.Configured(signer.AWSKMS)
		}, ""},
		{"pkcs11", with(pkcs11, map[string]string{"WALLET_SIGNER": "pkcs11"}), func(s Signers) bool {
			return s.Default == signer.PKCS11 && s.PKCS11.PIN.Reveal() == "s3cret-pin" && s.PKCS11.Sessions == 10
		}, ""},
		{"a token configured beside the local default", with(pkcs11), func(s Signers) bool {
			return s.Default == signer.Local && s.Configured(signer.PKCS11)
		}, ""},
		{"the PIN from a file", with(pkcs11, map[string]string{"PKCS11_PIN": "", "PKCS11_PIN_FILE": pinFile}), func(s Signers) bool {
			return s.PKCS11.PIN.Reveal() == "1234-from-file"
		}, ""},
		{"vault", with(map[string]string{"WALLET_SIGNER": "vault", "VAULT_ADDR": "https://vault:8200", "VAULT_TOKEN": "hvs.tok"}), func(s Signers) bool {
			return s.Vault.Mount == "transit" && s.Vault.Token.Reveal() == "hvs.tok"
		}, ""},
		{"awskms from AWS_REGION", with(map[string]string{"WALLET_SIGNER": "awskms", "AWS_REGION": "eu-west-1"}), func(s Signers) bool {
			return s.AWSKMS.Region == "eu-west-1" && s.AWSKMS.AliasPrefix == "agentwallet-"
		}, ""},
		{"an unknown signer", with(map[string]string{"WALLET_SIGNER": "hsm"}), nil, "WALLET_SIGNER"},
		{"pkcs11 without its settings", with(map[string]string{"WALLET_SIGNER": "pkcs11"}), nil, "WALLET_SIGNER"},
		{"a module without a PIN", with(map[string]string{"PKCS11_MODULE": "/m.so", "PKCS11_TOKEN_LABEL": "t"}), nil, "PKCS11_MODULE"},
		{"a PIN and a PIN file", with(pkcs11, map[string]string{"PKCS11_PIN_FILE": pinFile}), nil, "PKCS11_PIN_FILE"},
		// A Vault Agent or Proxy adds its own token.
		{"vault without a token", with(map[string]string{"VAULT_ADDR": "https://vault:8200"}), func(s Signers) bool {
			return s.Configured(signer.Vault) && s.Vault.Token == ""
		}, ""},
		{"awskms without a region", with(map[string]string{"WALLET_SIGNER": "awskms"}), nil, "WALLET_SIGNER"},
	} {
		c, err := LoadWorker(env(tc.env))
		switch {
		case tc.failsOn == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.failsOn == "" && !tc.want(c.Signers):
			t.Errorf("%s: read %+v", tc.name, c.Signers)
		case tc.failsOn != "" && (err == nil || !strings.Contains(err.Error(), tc.failsOn)):
			t.Errorf("%s: error %v, want one naming %s", tc.name, err, tc.failsOn)
		case err != nil && (strings.Contains(err.Error(), "s3cret-pin") || strings.Contains(err.Error(), "1234-from-file")):
			t.Errorf("%s: a secret in the error: %v", tc.name, err)
		}
	}
	// The API reads WALLET_SIGNER only.
	_, pub, _ := signer.GenerateMasterKey()
	a, err := LoadAPI(env(map[string]string{"WALLET_PUBLIC_KEY": pub, "WALLET_SIGNER": "pkcs11"}))
	if err != nil || a.WalletSigner != signer.PKCS11 {
		t.Fatalf("api: %v %v", a.WalletSigner, err)
	}
}

// The worker reads a PIN or Vault token file only when its owner alone may
// read or write it; any bit for group or others (read, write or execute)
// is refused with an error naming the variable, the file and its mode,
// never the secret.
func TestSigners_SecretFilesMustBePrivate(t *testing.T) {
	t.Parallel()
	priv, _, _ := signer.GenerateMasterKey()
	for _, v := range []struct{ file, set string }{
		{"PKCS11_PIN_FILE", "PKCS11_MODULE=/usr/lib/softhsm/libsofthsm2.so PKCS11_TOKEN_LABEL=wallets"},
		{"VAULT_TOKEN_FILE", "VAULT_ADDR=https://vault:8200"},
	} {
		for _, tc := range []struct {
			mode os.FileMode
			ok   bool
		}{
			{0o600, true}, {0o400, true}, {0o700, true},
			{0o644, false}, {0o640, false}, {0o604, false}, {0o620, false}, {0o602, false}, {0o610, false}, {0o601, false}, {0o666, false}, {0o440, false},
		} {
			path := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(path, []byte("s3cret-from-file\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil { // as asked, whatever the umask
				t.Fatal(err)
			}
			m := map[string]string{"WALLET_MASTER_KEY": priv, v.file: path}
			for _, kv := range strings.Fields(v.set) {
				k, val, _ := strings.Cut(kv, "=")
				m[k] = val
			}
			c, err := LoadWorker(env(m))
			switch {
			case tc.ok && err != nil:
				t.Errorf("%s mode %04o: %v", v.file, tc.mode, err)
			case tc.ok && c.Signers.PKCS11.PIN.Reveal() != "s3cret-from-file" && c.Signers.Vault.Token.Reveal() != "s3cret-from-file":
				t.Errorf("%s mode %04o: the secret was not read", v.file, tc.mode)
			case !tc.ok && err == nil:
				t.Errorf("%s mode %04o: accepted", v.file, tc.mode)
			case !tc.ok && !strings.Contains(err.Error(), fmt.Sprintf("%s: %s is mode %04o: make it readable by its owner only (chmod 600)", v.file, path, tc.mode)):
				t.Errorf("%s mode %04o: error %v", v.file, tc.mode, err)
			case err != nil && strings.Contains(err.Error(), "s3cret"):
				t.Errorf("%s mode %04o: the secret in the error: %v", v.file, tc.mode, err)
			}
		}
	}
}
