package chaintest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"slices"
	"testing"

	sol "github.com/gagliardetto/solana-go"

	"github.com/agentwallet/agentwallet/internal/localnettest"
)

// The forwarder is a tiny on-chain program that this package puts on the
// localnet, because none of the programs the localnet ships moves tokens
// to a third party by cross-program invocation (the Associated Token
// Account program's RecoverNested, its only token-moving CPI, pays the
// signer's own account; see TransferUSDCByCPI).
//
// It makes one CPI and nothing else: the program it invokes is its
// instruction's last account, the invoked instruction's accounts are all
// the others in order (each keeping its signer and writable flags, so a
// signature on the outer transaction carries into the inner instruction),
// and the invoked instruction's data is the forwarder's own instruction
// data, byte for byte. Wrapping SPL Token's Transfer this way leaves the
// transaction with no top-level token instruction: the transfer is an
// inner instruction of the forwarder.
//
// It is built here, with no Solana toolchain and no binary in the
// repository: 71 sBPF instructions, assembled below into an SBPF v3 ELF
// (SIMD-0178 static syscalls, SIMD-0189 strict ELF headers: one ELF
// header and one program header before the code, no sections, no
// relocations), which the localnet's LiteSVM (agave 4.3, solana-sbpf
// 0.23) loads when surfnet_setAccount puts it, executable, in an account
// owned by BPF Loader 2. It exists on the localnet only.

// ForwarderProgramID is the forwarder's address on the localnet.
var ForwarderProgramID = func() sol.PublicKey {
	h := sha256.Sum256([]byte("agentwallet/chaintest/forwarder/v1"))
	return sol.PublicKeyFromBytes(h[:])
}()

// forwarderELF is the forwarder's program file.
var forwarderELF = sbpfV3ELF(forwarderCode())

// The input a BPF Loader 2 program gets (agave's aligned serialization):
// the number of accounts (u64), then each account as
//
//	u8 duplicate marker (0xff: not a duplicate), u8 is_signer,
//	u8 is_writable, u8 executable, 4 bytes of padding,
//	key (32), owner (32), lamports (u64), data length (u64), data,
//	10 KiB of room to grow, padding to 8 bytes, rent epoch (u64),
//
// then the instruction data's length (u64), the data, and the program id.
const (
	inSigner     = 1
	inWritable   = 2
	inExecutable = 3
	inKey        = 8
	inOwner      = 40
	inLamports   = 72
	inDataLen    = 80
	inData       = 88
	inRealloc    = 10 * 1024 // MAX_PERMITTED_DATA_INCREASE
)

// What the program builds for sol_invoke_signed_c, in its heap (32 KiB
// at 0x300000000, zeroed): the instruction, then the account metas, then
// the account infos, as the C SDK lays them out:
//
//	SolInstruction  {program_id *, accounts *, account_len, data *, data_len}
//	SolAccountMeta  {pubkey *, is_writable u8, is_signer u8}          16 bytes
//	SolAccountInfo  {key *, lamports *, data_len, data *, owner *,
//	                 rent_epoch, is_signer u8, is_writable u8, executable u8}  56 bytes
const (
	heapStart   = 0x3_0000_0000
	maxAccounts = 64
	metasAt     = 64
	metaSize    = 16
	infosAt     = metasAt + metaSize*maxAccounts
	infoSize    = 56
)

// The forwarder's errors (the instruction fails with Custom(n)).
const (
	forwarderErrDuplicate = 1 // an account appears twice in its instruction
	forwarderErrAccounts  = 2 // no accounts, or more than maxAccounts
)

// sBPF registers and opcodes used (solana-sbpf doc/bytecode.md; SBPF v3
// keeps v0's encodings).
const (
	r0, r1, r2, r3, r4, r5, r6, r7, r8, r9 = 0, 1, 2, 3, 4, 5, 6, 7, 8, 9

	opLDDW     = 0x18
	opLDXB     = 0x71
	opLDXDW    = 0x79
	opSTXB     = 0x73
	opSTXDW    = 0x7b
	opADD64I   = 0x07
	opADD64R   = 0x0f
	opAND64I   = 0x57
	opMOV64I   = 0xb7
	opMOV64R   = 0xbf
	opJA       = 0x05
	opJEQI     = 0x15
	opJGTI     = 0x25
	opJNEI     = 0x55
	opJGER     = 0x3d
	opCALL     = 0x85
	opEXIT     = 0x95
	nonDupMark = 0xff
)

// assembler collects sBPF instructions; jumps name a label, resolved at
// the end.
type assembler struct {
	code   []byte
	labels map[string]int
	jumps  map[int]string // instruction index → label
}

func (a *assembler) emit(op byte, dst, src uint8, off int16, imm int32) {
	var ins [8]byte
	ins[0] = op
	ins[1] = dst | src<<4
	binary.LittleEndian.PutUint16(ins[2:], uint16(off))
	binary.LittleEndian.PutUint32(ins[4:], uint32(imm))
	a.code = append(a.code, ins[:]...)
}

func (a *assembler) pc() int { return len(a.code) / 8 }

func (a *assembler) label(name string) { a.labels[name] = a.pc() }

func (a *assembler) jump(op byte, dst, src uint8, imm int32, to string) {
	a.jumps[a.pc()] = to
	a.emit(op, dst, src, 0, imm)
}

func (a *assembler) lddw(dst uint8, v uint64) {
	a.emit(opLDDW, dst, 0, 0, int32(uint32(v)))
	a.emit(0, 0, 0, 0, int32(uint32(v>>32)))
}

func (a *assembler) ldx(op byte, dst, src uint8, off int16)       { a.emit(op, dst, src, off, 0) }
func (a *assembler) stx(op byte, dst uint8, off int16, src uint8) { a.emit(op, dst, src, off, 0) }
func (a *assembler) addi(dst uint8, imm int32)                    { a.emit(opADD64I, dst, 0, 0, imm) }
func (a *assembler) movi(dst uint8, imm int32)                    { a.emit(opMOV64I, dst, 0, 0, imm) }
func (a *assembler) mov(dst, src uint8)                           { a.emit(opMOV64R, dst, src, 0, 0) }

func (a *assembler) assemble() []byte {
	for at, name := range a.jumps {
		to, ok := a.labels[name]
		if !ok {
			panic("chaintest: forwarder: no label " + name)
		}
		binary.LittleEndian.PutUint16(a.code[at*8+2:], uint16(int16(to-at-1)))
	}
	return a.code
}

// forwarderCode is the forwarder's sBPF code. Registers: r6 walks the
// input, r7 is the number of accounts, r8 the account's index, r9 the
// heap, r3 and r4 the account's meta and info.
func forwarderCode() []byte {
	a := &assembler{labels: map[string]int{}, jumps: map[int]string{}}
	a.lddw(r9, heapStart)
	a.ldx(opLDXDW, r7, r1, 0)
	a.jump(opJEQI, r7, 0, 0, "bad-accounts")
	a.jump(opJGTI, r7, 0, maxAccounts, "bad-accounts")
	a.mov(r6, r1)
	a.addi(r6, 8)
	a.mov(r3, r9)
	a.addi(r3, metasAt)
	a.mov(r4, r9)
	a.addi(r4, infosAt)
	a.movi(r8, 0)

	a.label("account")
	a.jump(opJGER, r8, r7, 0, "invoke")
	a.ldx(opLDXB, r2, r6, 0)
	a.jump(opJNEI, r2, 0, nonDupMark, "duplicate")
	// meta.pubkey = info.key = &key
	a.mov(r2, r6)
	a.addi(r2, inKey)
	a.stx(opSTXDW, r3, 0, r2)
	a.stx(opSTXDW, r4, 0, r2)
	// info.lamports = &lamports
	a.mov(r2, r6)
	a.addi(r2, inLamports)
	a.stx(opSTXDW, r4, 8, r2)
	// info.data_len = data length
	a.ldx(opLDXDW, r5, r6, inDataLen)
	a.stx(opSTXDW, r4, 16, r5)
	// info.data = &data
	a.mov(r2, r6)
	a.addi(r2, inData)
	a.stx(opSTXDW, r4, 24, r2)
	// info.owner = &owner
	a.mov(r2, r6)
	a.addi(r2, inOwner)
	a.stx(opSTXDW, r4, 32, r2)
	// the flags
	a.ldx(opLDXB, r2, r6, inSigner)
	a.stx(opSTXB, r3, 9, r2)
	a.stx(opSTXB, r4, 48, r2)
	a.ldx(opLDXB, r2, r6, inWritable)
	a.stx(opSTXB, r3, 8, r2)
	a.stx(opSTXB, r4, 49, r2)
	a.ldx(opLDXB, r2, r6, inExecutable)
	a.stx(opSTXB, r4, 50, r2)
	// past the data (padded to 8 bytes) and its room to grow: the rent
	// epoch, then the next account
	a.addi(r5, 7)
	a.emit(opAND64I, r5, 0, 0, -8)
	a.emit(opADD64R, r6, r5, 0, 0)
	a.ldx(opLDXDW, r2, r6, inData+inRealloc)
	a.stx(opSTXDW, r4, 40, r2)
	a.addi(r6, inData+inRealloc+8)
	a.addi(r3, metaSize)
	a.addi(r4, infoSize)
	a.addi(r8, 1)
	a.jump(opJA, 0, 0, 0, "account")

	// r6 is at the instruction data's length; the last meta (r3-16) is
	// the program to invoke.
	a.label("invoke")
	a.ldx(opLDXDW, r2, r6, 0)
	a.addi(r6, 8)
	a.ldx(opLDXDW, r5, r3, -metaSize)
	a.stx(opSTXDW, r9, 0, r5) // program_id
	a.mov(r5, r9)
	a.addi(r5, metasAt)
	a.stx(opSTXDW, r9, 8, r5) // accounts
	a.mov(r5, r7)
	a.addi(r5, -1)
	a.stx(opSTXDW, r9, 16, r5) // account_len: all but the program
	a.stx(opSTXDW, r9, 24, r6) // data
	a.stx(opSTXDW, r9, 32, r2) // data_len
	a.mov(r1, r9)
	a.mov(r2, r9)
	a.addi(r2, infosAt)
	a.mov(r3, r7)
	a.movi(r4, 0)
	a.movi(r5, 0)
	a.emit(opCALL, 0, 0, 0, int32(syscallHash("sol_invoke_signed_c")))
	a.emit(opEXIT, 0, 0, 0, 0)

	a.label("duplicate")
	a.movi(r0, forwarderErrDuplicate)
	a.emit(opEXIT, 0, 0, 0, 0)
	a.label("bad-accounts")
	a.movi(r0, forwarderErrAccounts)
	a.emit(opEXIT, 0, 0, 0, 0)
	return a.assemble()
}

// syscallHash is a syscall's key: murmur3 (32 bits, seed 0) of its name,
// which an SBPF v3 `call` (source register 0) carries as its immediate.
func syscallHash(name string) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	b := []byte(name)
	var h uint32
	for len(b) >= 4 {
		k := binary.LittleEndian.Uint32(b)
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
		b = b[4:]
	}
	var k uint32
	switch len(b) {
	case 3:
		k ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(b[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(name))
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// sbpfV3ELF wraps code in an SBPF v3 ELF: the 64-byte ELF header (64-bit,
// little-endian, EM_BPF, e_flags 3, entry at the first instruction), one
// 56-byte PT_LOAD program header (executable, at MM_BYTECODE_START
// 0x100000000), then the code.
func sbpfV3ELF(code []byte) []byte {
	const (
		ehSize       = 64
		phSize       = 56
		bytecodeAddr = 0x1_0000_0000
	)
	le := binary.LittleEndian
	f := make([]byte, ehSize+phSize, ehSize+phSize+len(code))
	copy(f, []byte{0x7f, 'E', 'L', 'F', 2 /* 64-bit */, 1 /* little-endian */, 1 /* version */})
	le.PutUint16(f[16:], 3)            // e_type: ET_DYN
	le.PutUint16(f[18:], 247)          // e_machine: EM_BPF
	le.PutUint32(f[20:], 1)            // e_version
	le.PutUint64(f[24:], bytecodeAddr) // e_entry
	le.PutUint64(f[32:], ehSize)       // e_phoff
	le.PutUint32(f[48:], 3)            // e_flags: SBPF v3
	le.PutUint16(f[52:], ehSize)       // e_ehsize
	le.PutUint16(f[54:], phSize)       // e_phentsize
	le.PutUint16(f[56:], 1)            // e_phnum
	ph := f[ehSize:]
	le.PutUint32(ph[0:], 1)                  // p_type: PT_LOAD
	le.PutUint32(ph[4:], 1)                  // p_flags: PF_X
	le.PutUint64(ph[8:], ehSize+phSize)      // p_offset
	le.PutUint64(ph[16:], bytecodeAddr)      // p_vaddr
	le.PutUint64(ph[24:], bytecodeAddr)      // p_paddr
	le.PutUint64(ph[32:], uint64(len(code))) // p_filesz
	le.PutUint64(ph[40:], uint64(len(code))) // p_memsz
	le.PutUint64(ph[48:], 8)                 // p_align
	return append(f, code...)
}

// DeployForwarder puts the forwarder on the localnet unless it is there
// already (surfnet_setAccount: executable, owned by BPF Loader 2).
// Putting it there again is harmless, so tests may race to do it.
func DeployForwarder(t testing.TB, ln *localnettest.Localnet) {
	t.Helper()
	var got struct {
		Value *struct {
			Data       []string `json:"data"`
			Executable bool     `json:"executable"`
		} `json:"value"`
	}
	ln.Call(t, &got, "getAccountInfo", ForwarderProgramID.String(), map[string]any{"encoding": "base64"})
	if got.Value != nil && got.Value.Executable && len(got.Value.Data) == 2 && got.Value.Data[0] == base64.StdEncoding.EncodeToString(forwarderELF) {
		return
	}
	var rent uint64
	ln.Call(t, &rent, "getMinimumBalanceForRentExemption", len(forwarderELF))
	ln.Call(t, nil, "surfnet_setAccount", ForwarderProgramID.String(), map[string]any{
		"lamports":   rent,
		"data":       hex.EncodeToString(forwarderELF),
		"owner":      sol.BPFLoaderProgramID.String(),
		"executable": true,
	})
}

// forward wraps ix so that it runs as an inner instruction of the
// forwarder: the same accounts, then ix's program, and the same data.
func forward(t testing.TB, ix sol.Instruction) sol.Instruction {
	t.Helper()
	data, err := ix.Data()
	if err != nil {
		t.Fatalf("forwarder: encode the inner instruction: %v", err)
	}
	accounts := append(slices.Clone(ix.Accounts()), sol.Meta(ix.ProgramID()))
	return sol.NewInstruction(ForwarderProgramID, accounts, data)
}
