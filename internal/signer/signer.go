// Package signer keeps wallet secret keys sealed and signs with them. The
// API process holds only a Sealer (a public key: it can lock a fresh secret
// but never open one); the worker holds a Signer, which signs message bytes
// with a wallet's key and never hands the key out. The Keystore is the
// envelope Signer: its private keys open a sealed secret for one signature.
//
// Sealing is HPKE (RFC 9180) base mode with DHKEM(X25519, HKDF-SHA256),
// HKDF-SHA256 and AES-256-GCM: every secret gets its own ephemeral key and
// AEAD key (envelope encryption), and the wallet's public key is bound in as
// HPKE info so a sealed secret cannot be moved to another wallet's row.
package signer

import (
	"context"
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/hpke"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Sealed is a wallet secret as stored: which master key can open it, and
// the HPKE encapsulated key followed by the ciphertext.
type Sealed struct {
	KeyID      string
	Ciphertext []byte
}

// ErrUnknownKey means no configured master key matches a sealed secret's
// key id: the worker is missing a (retired) master key.
var ErrUnknownKey = errors.New("no master key for this key id")

// ErrOpen means the sealed secret failed authentication or does not belong
// to the wallet it was read for.
var ErrOpen = errors.New("sealed wallet secret does not open")

var (
	kdf  = hpke.HKDFSHA256()
	aead = hpke.AES256GCM()
)

func info(walletPubkey []byte) []byte {
	return append([]byte("agentwallet/wallet-secret/v1/"), walletPubkey...)
}

// KeyID names a master key by its public half: the first 8 bytes of
// SHA-256, in hex. It is stored beside each sealed secret for rotation.
func KeyID(pub *ecdh.PublicKey) string {
	sum := sha256.Sum256(pub.Bytes())
	return hex.EncodeToString(sum[:8])
}

// Sealer locks wallet secrets to the worker's master public key. It holds
// nothing that can open them.
type Sealer struct {
	pub   hpke.PublicKey
	keyID string
}

// NewSealer parses WALLET_PUBLIC_KEY material (base64 X25519 public key).
func NewSealer(publicKeyB64 string) (*Sealer, error) {
	raw, err := decodeKey(publicKeyB64)
	if err != nil {
		return nil, err
	}
	pub, err := ecdh.X25519().NewPublicKey(raw)
	if err != nil {
		return nil, fmt.Errorf("X25519 public key: %w", err)
	}
	hpub, err := hpke.NewDHKEMPublicKey(pub)
	if err != nil {
		return nil, err
	}
	return &Sealer{pub: hpub, keyID: KeyID(pub)}, nil
}

// KeyID names the master key new secrets are sealed to.
func (s *Sealer) KeyID() string { return s.keyID }

// Seal encrypts a wallet's ed25519 secret key, bound to that wallet's
// public key.
func (s *Sealer) Seal(secret ed25519.PrivateKey) (Sealed, error) {
	if len(secret) != ed25519.PrivateKeySize {
		return Sealed{}, errors.New("seal: not an ed25519 private key")
	}
	pub := secret.Public().(ed25519.PublicKey)
	ct, err := hpke.Seal(s.pub, kdf, aead, info(pub), secret.Seed())
	if err != nil {
		return Sealed{}, fmt.Errorf("seal wallet secret: %w", err)
	}
	return Sealed{KeyID: s.keyID, Ciphertext: ct}, nil
}

// SealValue encrypts another secret the worker alone must read (a webhook
// signing secret), bound to what it belongs to (`binding`, e.g. the
// endpoint's id) so it cannot be moved to another row.
func (s *Sealer) SealValue(binding string, plaintext []byte) (Sealed, error) {
	ct, err := hpke.Seal(s.pub, kdf, aead, valueInfo(binding), plaintext)
	if err != nil {
		return Sealed{}, fmt.Errorf("seal value: %w", err)
	}
	return Sealed{KeyID: s.keyID, Ciphertext: ct}, nil
}

func valueInfo(binding string) []byte {
	return append([]byte("agentwallet/value/v1/"), binding...)
}

// NewWallet makes a fresh ed25519 keypair from crypto/rand and seals its
// secret at once; the plaintext never leaves this function.
func (s *Sealer) NewWallet() (ed25519.PublicKey, Sealed, error) {
	pub, secret, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, Sealed{}, fmt.Errorf("generate wallet key: %w", err)
	}
	defer clear(secret)
	sealed, err := s.Seal(secret)
	if err != nil {
		return nil, Sealed{}, err
	}
	return pub, sealed, nil
}

// Make makes a new envelope key: a fresh keypair, its secret sealed at
// once. name is not needed: the seal binds the secret to its public key.
func (s *Sealer) Make(_ context.Context, _ string) (Key, error) {
	pub, sealed, err := s.NewWallet()
	if err != nil {
		return Key{}, err
	}
	return Key{Public: pub, Backend: Local, Sealed: sealed}, nil
}

// Keystore opens sealed wallet secrets. Only the worker builds one. It can
// hold several master keys so secrets sealed to a retired key still open.
type Keystore struct {
	keys    map[string]hpke.PrivateKey
	current *Sealer // seals to the first key given, for re-sealing
}

// NewKeystore parses WALLET_MASTER_KEY material: one or more base64 X25519
// private keys separated by commas (the first is the current one).
func NewKeystore(masterKeysB64 string) (*Keystore, error) {
	ks := &Keystore{keys: map[string]hpke.PrivateKey{}}
	for i, part := range strings.Split(masterKeysB64, ",") {
		raw, err := decodeKey(part)
		if err != nil {
			return nil, fmt.Errorf("key %d: %w", i+1, err)
		}
		priv, err := ecdh.X25519().NewPrivateKey(raw)
		clear(raw)
		if err != nil {
			return nil, fmt.Errorf("key %d: X25519 private key: %w", i+1, err)
		}
		hpriv, err := hpke.NewDHKEMPrivateKey(priv)
		if err != nil {
			return nil, err
		}
		ks.keys[KeyID(priv.PublicKey())] = hpriv
		if i == 0 {
			hpub, err := hpke.NewDHKEMPublicKey(priv.PublicKey())
			if err != nil {
				return nil, err
			}
			ks.current = &Sealer{pub: hpub, keyID: KeyID(priv.PublicKey())}
		}
	}
	return ks, nil
}

// KeyIDs lists the master keys the keystore holds.
func (k *Keystore) KeyIDs() []string {
	ids := make([]string, 0, len(k.keys))
	for id := range k.keys {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Current names the master key re-sealed secrets are sealed to: the
// first of WALLET_MASTER_KEY.
func (k *Keystore) Current() string { return k.current.keyID }

// Reseal opens a wallet's secret and seals it again to the current master
// key: rotation, with the secret inside this package throughout.
func (k *Keystore) Reseal(s Sealed, walletPubkey ed25519.PublicKey) (Sealed, error) {
	secret, err := k.open(s, walletPubkey)
	if err != nil {
		return Sealed{}, err
	}
	defer clear(secret)
	return k.current.Seal(secret)
}

// MoveTo opens an envelope key and imports its seed into to, named name:
// the seed goes from here into the keeper and nowhere else. The key to
// returns signs for the same address.
func (k *Keystore) MoveTo(ctx context.Context, key Key, to Importer, name string) (Key, error) {
	secret, err := k.open(key.Sealed, key.Public)
	if err != nil {
		return Key{}, err
	}
	defer clear(secret)
	seed := secret.Seed()
	defer clear(seed)
	moved, err := to.Import(ctx, name, seed)
	if err != nil {
		return Key{}, err
	}
	if !moved.Public.Equal(key.Public) {
		return Key{}, fmt.Errorf("the %s key made from the seed has another public key", to.Backend())
	}
	return moved, nil
}

// exportInfo binds an exported secret to its wallet, apart from the
// master key's seals.
func exportInfo(walletPubkey []byte) []byte {
	return append([]byte("agentwallet/wallet-export/v1/"), walletPubkey...)
}

// Export opens an envelope key and seals its 32-byte seed (HPKE, as
// Seal, info "agentwallet/wallet-export/v1/" and the wallet's public key)
// to recipient, an X25519 public key the wallet's owner supplies: the
// secret leaves the service only sealed to the owner.
func (k *Keystore) Export(key Key, recipient []byte) ([]byte, error) {
	hpub, err := exportRecipient(recipient)
	if err != nil {
		return nil, err
	}
	secret, err := k.open(key.Sealed, key.Public)
	if err != nil {
		return nil, err
	}
	defer clear(secret)
	return hpke.Seal(hpub, kdf, aead, exportInfo(key.Public), secret.Seed())
}

// exportRecipient is recipient as an HPKE public key.
func exportRecipient(recipient []byte) (hpke.PublicKey, error) {
	pub, err := ecdh.X25519().NewPublicKey(recipient)
	if err != nil {
		return nil, fmt.Errorf("recipient: X25519 public key: %w", err)
	}
	return hpke.NewDHKEMPublicKey(pub)
}

// CheckExportRecipient reports whether anything can be sealed to
// recipient: 32 bytes that are an X25519 key, and not one of the
// low-order points with which the key agreement yields nothing (HPKE
// refuses them). A request to such a key could never be sealed.
func CheckExportRecipient(recipient []byte) error {
	hpub, err := exportRecipient(recipient)
	if err != nil {
		return err
	}
	_, err = hpke.Seal(hpub, kdf, aead, []byte("agentwallet/wallet-export/check"), nil)
	return err
}

// OpenExport opens an exported secret with the recipient's X25519 private
// key and returns the wallet's seed, checked against its public key: the
// owner's side of Export (and its tests).
func OpenExport(recipient *ecdh.PrivateKey, walletPubkey ed25519.PublicKey, sealed []byte) ([]byte, error) {
	hpriv, err := hpke.NewDHKEMPrivateKey(recipient)
	if err != nil {
		return nil, err
	}
	seed, err := hpke.Open(hpriv, kdf, aead, exportInfo(walletPubkey), sealed)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, ErrOpen
	}
	if !ed25519.NewKeyFromSeed(seed).Public().(ed25519.PublicKey).Equal(walletPubkey) {
		return nil, ErrOpen
	}
	return seed, nil
}

// ResealValue opens a value sealed with binding and seals it again to the
// current master key.
func (k *Keystore) ResealValue(s Sealed, binding string) (Sealed, error) {
	v, err := k.OpenValue(s, binding)
	if err != nil {
		return Sealed{}, err
	}
	defer clear(v)
	return k.current.SealValue(binding, v)
}

// Has reports whether the keystore can open secrets sealed to keyID.
func (k *Keystore) Has(keyID string) bool {
	_, ok := k.keys[keyID]
	return ok
}

// open decrypts the secret of the wallet whose public key is walletPubkey,
// and checks the secret really is that wallet's. It stays in this package:
// callers get signatures (Sign), never keys.
func (k *Keystore) open(s Sealed, walletPubkey ed25519.PublicKey) (ed25519.PrivateKey, error) {
	priv, ok := k.keys[s.KeyID]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, s.KeyID)
	}
	seed, err := hpke.Open(priv, kdf, aead, info(walletPubkey), s.Ciphertext)
	if err != nil || len(seed) != ed25519.SeedSize {
		return nil, ErrOpen
	}
	defer clear(seed)
	secret := ed25519.NewKeyFromSeed(seed)
	if !secret.Public().(ed25519.PublicKey).Equal(walletPubkey) {
		clear(secret)
		return nil, ErrOpen
	}
	return secret, nil
}

// OpenValue decrypts a value sealed by SealValue with the same binding.
func (k *Keystore) OpenValue(s Sealed, binding string) ([]byte, error) {
	priv, ok := k.keys[s.KeyID]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKey, s.KeyID)
	}
	v, err := hpke.Open(priv, kdf, aead, valueInfo(binding), s.Ciphertext)
	if err != nil {
		return nil, ErrOpen
	}
	return v, nil
}

// GenerateMasterKey makes a new X25519 master key pair, base64 encoded:
// the private half for the worker, the public half for the API.
func GenerateMasterKey() (privateB64, publicB64 string, err error) {
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		return "", "", err
	}
	return base64.StdEncoding.EncodeToString(priv.Bytes()),
		base64.StdEncoding.EncodeToString(priv.PublicKey().Bytes()), nil
}

func decodeKey(s string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil {
		return nil, errors.New("not valid base64")
	}
	if len(raw) != 32 {
		return nil, fmt.Errorf("decodes to %d bytes, want 32", len(raw))
	}
	return raw, nil
}
