// Solana addresses are base58 of 32 bytes. A few lines decode them here so
// the allowlist editor can say what is wrong while the owner types, before
// the API would refuse the policy.

const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** base58Decode is the bytes s encodes, or null when s has a character outside the alphabet. */
export function base58Decode(s: string): Uint8Array | null {
  const bytes: number[] = []; // little-endian while decoding
  for (const ch of s) {
    let carry = ALPHABET.indexOf(ch);
    if (carry < 0) return null;
    for (let i = 0; i < bytes.length; i++) {
      carry += bytes[i] * 58;
      bytes[i] = carry & 0xff;
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push(carry & 0xff);
      carry >>= 8;
    }
  }
  // Each leading '1' is a leading zero byte.
  for (const ch of s) {
    if (ch !== '1') break;
    bytes.push(0);
  }
  return Uint8Array.from(bytes.reverse());
}

/** addressProblem says why s is not a Solana address, or '' when it is one. */
export function addressProblem(s: string): string {
  if (s === '') return 'Enter an address.';
  const bad = [...s].find((ch) => !ALPHABET.includes(ch));
  if (bad !== undefined) return `“${bad}” is not a base58 character (no 0, O, I or l).`;
  if (s.length > 64) return 'Too long for a Solana address.';
  const n = base58Decode(s)?.length ?? 0;
  return n === 32 ? '' : `Decodes to ${n} bytes; a Solana address has 32.`;
}
