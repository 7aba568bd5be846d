package solana

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	sol "github.com/gagliardetto/solana-go"
	"github.com/gagliardetto/solana-go/rpc"
)

// TokenTerms is what sending a token costs beyond the network fee, read
// from its mint: the rent of a recipient's new associated account.
type TokenTerms struct {
	Token Token
	// AccountSize is the bytes of a new associated token account of the
	// mint: 165 under SPL Token; under Token-2022 the 165-byte base, the
	// account-type byte and the extensions the ATA program gives it
	// (ImmutableOwner and those the mint's extensions require).
	AccountSize int
	// AccountRentLamports is that account's rent-exempt minimum, which
	// whoever pays a transfer that creates it pays (a fee payer, when
	// sponsoring: TokenAccountRentLamports is only SPL Token's).
	AccountRentLamports uint64
}

// TermsMaxAge is how long a mint's terms are kept: a send does not read
// the mint each time, and an issuer's change (a fee, a hook, a pause)
// reaches sends within it.
const TermsMaxAge = time.Minute

// UnsupportedReason says why a token cannot be sent.
type UnsupportedReason string

// The reasons TokenTerms refuses a token for.
const (
	UnsupportedMissing         UnsupportedReason = "missing"          // no mint at the address
	UnsupportedMismatch        UnsupportedReason = "mismatch"         // another program or decimals than the token says
	UnsupportedMalformed       UnsupportedReason = "malformed"        // the mint's data does not parse
	UnsupportedTransferHook    UnsupportedReason = "transfer_hook"    // a hook program is set
	UnsupportedTransferFee     UnsupportedReason = "transfer_fee"     // a fee is withheld from transfers
	UnsupportedNonTransferable UnsupportedReason = "non_transferable" // its tokens cannot move
	UnsupportedPaused          UnsupportedReason = "paused"           // its issuer paused it
)

// UnsupportedTokenError is a token the service does not send: a
// transfer of it would fail on chain or deliver less than its amount.
type UnsupportedTokenError struct {
	Token  Token
	Reason UnsupportedReason
	Detail string
}

func (e *UnsupportedTokenError) Error() string {
	return fmt.Sprintf("%s (mint %s) cannot be sent: %s", e.Token.name(), e.Token.Mint, e.Detail)
}

// The Token-2022 extension types TokenTerms reads (spl-token-2022's
// ExtensionType numbering) and the sizes of the account extensions a new
// account gets.
const (
	extTransferFeeConfig      = 1
	extTransferFeeAmount      = 2
	extImmutableOwner         = 7
	extNonTransferable        = 9
	extNonTransferableAccount = 13
	extTransferHook           = 14
	extTransferHookAccount    = 15
	extPausable               = 26
	extPausableAccount        = 27
)

var accountExtensionLen = map[uint16]int{
	extImmutableOwner:         0,
	extTransferFeeAmount:      8,
	extNonTransferableAccount: 0,
	extTransferHookAccount:    1,
	extPausableAccount:        0,
}

const (
	// tokenAccountSize is an SPL Token account (and a Token-2022 one's
	// base).
	tokenAccountSize = 165
	// mintSize is an SPL Token mint (and a Token-2022 one's base, padded
	// to tokenAccountSize when it has extensions).
	mintSize = 82
	// multisigSize: Token-2022 adds two bytes to an account of exactly
	// this size, so it cannot be mistaken for a multisig.
	multisigSize = 355
	// accountTypeMint is the byte after the padded base of a Token-2022
	// mint with extensions.
	accountTypeMint = 1
)

// RentExemptLamports is the rent-exempt minimum of an account of size
// bytes under the runtime's Rent defaults (see TokenAccountRentLamports).
func RentExemptLamports(size int) uint64 { return uint64(size+128) * 3_480 * 2 }

// clockSysvar holds the current epoch (offset 16), which decides which of
// a mint's two transfer fees is in force.
var clockSysvar = sol.MustPublicKeyFromBase58("SysvarC1ock11111111111111111111111111111111")

// termsCache keeps TokenTerms' answers, refusals included, per token.
type termsCache struct {
	mu  sync.Mutex
	m   map[Token]termsEntry
	now func() time.Time
}

type termsEntry struct {
	terms TokenTerms
	err   *UnsupportedTokenError
	at    time.Time
}

func newTermsCache() *termsCache {
	return &termsCache{m: map[Token]termsEntry{}, now: time.Now}
}

// TokenTerms reads tk's mint (confirmed) and answers the rent of a new
// recipient account of it, or an *UnsupportedTokenError when a transfer
// of it cannot be sent as the service builds transfers: its mint is
// missing or of another program or decimals than tk says, or it is a
// Token-2022 mint with a transfer-hook program (the service does not
// resolve a hook's extra accounts, so the transfer would fail), a
// non-zero transfer fee in force now or from the next epoch (the recipient
// would receive less than the amount), non-transferable, or paused. An
// answer is kept for TermsMaxAge.
func (c *Client) TokenTerms(ctx context.Context, tk Token) (TokenTerms, error) {
	if err := tk.validate(); err != nil {
		return TokenTerms{}, err
	}
	now := c.terms.now()
	c.terms.mu.Lock()
	e, ok := c.terms.m[tk]
	c.terms.mu.Unlock()
	if ok && now.Sub(e.at) < TermsMaxAge {
		if e.err != nil {
			return TokenTerms{}, e.err
		}
		return e.terms, nil
	}
	terms, refused, err := c.readTerms(ctx, tk)
	if err != nil {
		return TokenTerms{}, err
	}
	c.terms.mu.Lock()
	c.terms.m[tk] = termsEntry{terms: terms, err: refused, at: now}
	c.terms.mu.Unlock()
	if refused != nil {
		return TokenTerms{}, refused
	}
	return terms, nil
}

func (c *Client) readTerms(ctx context.Context, tk Token) (TokenTerms, *UnsupportedTokenError, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	res, err := c.rpc.GetMultipleAccountsWithOpts(ctx, []sol.PublicKey{tk.Mint, clockSysvar}, &rpc.GetMultipleAccountsOpts{
		Encoding: sol.EncodingBase64, Commitment: rpc.CommitmentConfirmed,
	})
	if err != nil {
		return TokenTerms{}, nil, c.rpcError("getMultipleAccounts", err)
	}
	if res == nil || len(res.Value) != 2 {
		return TokenTerms{}, nil, fmt.Errorf("%w: getMultipleAccounts: malformed answer", ErrRPC)
	}
	epoch, epochKnown := uint64(0), false
	if clock := res.Value[1]; clock != nil {
		if d := clock.Data.GetBinary(); len(d) >= 24 {
			epoch, epochKnown = binary.LittleEndian.Uint64(d[16:24]), true
		}
	}
	terms, refused := mintTerms(tk, res.Value[0], epoch, epochKnown)
	return terms, refused, nil
}

// mintTerms judges tk's mint account (nil: missing) at epoch (unknown:
// either of a fee config's two fees counts).
func mintTerms(tk Token, acct *rpc.Account, epoch uint64, epochKnown bool) (TokenTerms, *UnsupportedTokenError) {
	refuse := func(r UnsupportedReason, format string, a ...any) (TokenTerms, *UnsupportedTokenError) {
		return TokenTerms{}, &UnsupportedTokenError{Token: tk, Reason: r, Detail: fmt.Sprintf(format, a...)}
	}
	if acct == nil {
		return refuse(UnsupportedMissing, "no mint exists at this address")
	}
	if !acct.Owner.Equals(tk.Program) {
		return refuse(UnsupportedMismatch, "the mint is owned by %s, not %s", acct.Owner, tk.Program)
	}
	data := acct.Data.GetBinary()
	if len(data) < mintSize || data[45] != 1 {
		return refuse(UnsupportedMalformed, "the mint's data is not an initialized mint")
	}
	if data[44] != tk.Decimals {
		return refuse(UnsupportedMismatch, "the mint has %d decimals, not %d", data[44], tk.Decimals)
	}
	if !tk.Is2022() {
		return TokenTerms{Token: tk, AccountSize: tokenAccountSize, AccountRentLamports: RentExemptLamports(tokenAccountSize)}, nil
	}
	// A Token-2022 account made by the ATA program always has
	// ImmutableOwner, then what the mint's extensions require
	// (get_required_init_account_extensions), each once.
	accountExts := []uint16{extImmutableOwner}
	need := func(x uint16) {
		for _, have := range accountExts {
			if have == x {
				return
			}
		}
		accountExts = append(accountExts, x)
	}
	if len(data) > mintSize {
		if len(data) <= tokenAccountSize || data[tokenAccountSize] != accountTypeMint {
			return refuse(UnsupportedMalformed, "the mint's extensions do not parse")
		}
		for o := tokenAccountSize + 1; o+4 <= len(data); {
			typ := binary.LittleEndian.Uint16(data[o:])
			n := int(binary.LittleEndian.Uint16(data[o+2:]))
			if typ == 0 { // zero padding after the last entry
				break
			}
			if o+4+n > len(data) {
				return refuse(UnsupportedMalformed, "extension %d runs past the mint's data", typ)
			}
			v := data[o+4 : o+4+n]
			o += 4 + n
			switch typ {
			case extTransferHook:
				if n != 64 {
					return refuse(UnsupportedMalformed, "its TransferHook extension is %d bytes", n)
				}
				if hook := sol.PublicKeyFromBytes(v[32:64]); !hook.IsZero() {
					return refuse(UnsupportedTransferHook, "it has a transfer hook (program %s); the service does not resolve a hook's extra accounts, so its transfers would fail", hook)
				}
				need(extTransferHookAccount)
			case extTransferFeeConfig:
				if n != 108 {
					return refuse(UnsupportedMalformed, "its TransferFeeConfig extension is %d bytes", n)
				}
				if bps, ok := feeInForce(v, epoch, epochKnown); !ok {
					return refuse(UnsupportedTransferFee, "it withholds a transfer fee (%d basis points): the recipient would receive less than the amount", bps)
				}
				need(extTransferFeeAmount)
			case extNonTransferable:
				return refuse(UnsupportedNonTransferable, "it is non-transferable")
			case extPausable:
				if n != 33 {
					return refuse(UnsupportedMalformed, "its Pausable extension is %d bytes", n)
				}
				if v[32] != 0 {
					return refuse(UnsupportedPaused, "its issuer has paused it")
				}
				need(extPausableAccount)
			}
		}
	}
	size := tokenAccountSize + 1
	for _, x := range accountExts {
		size += 4 + accountExtensionLen[x]
	}
	if size == multisigSize {
		size += 2
	}
	return TokenTerms{Token: tk, AccountSize: size, AccountRentLamports: RentExemptLamports(size)}, nil
}

// feeInForce reads a TransferFeeConfig (two authorities, the withheld
// amount, then the older and the newer fee: epoch u64, maximum fee u64,
// basis points u16) and reports whether no fee is taken now or from the
// next epoch (a kept answer must hold across an epoch boundary); when it
// is, also the basis points. The newer fee takes over at its epoch.
func feeInForce(v []byte, epoch uint64, epochKnown bool) (uint16, bool) {
	type fee struct {
		epoch, max uint64
		bps        uint16
	}
	read := func(o int) fee {
		return fee{binary.LittleEndian.Uint64(v[o:]), binary.LittleEndian.Uint64(v[o+8:]), binary.LittleEndian.Uint16(v[o+16:])}
	}
	older, newer := read(72), read(90)
	charges := func(f fee) bool { return f.bps > 0 && f.max > 0 }
	if charges(newer) && (!epochKnown || newer.epoch <= epoch+1) {
		return newer.bps, false
	}
	if charges(older) && (!epochKnown || epoch < newer.epoch) {
		return older.bps, false
	}
	return 0, true
}
