// Solana addresses are base58 (bs58) of 32 bytes. Checking them here lets a
// form say what is wrong while the owner types, before the API would refuse.
import bs58 from 'bs58';

/** addressProblem says why s is not a Solana address, or '' when it is one. */
export function addressProblem(s: string): string {
  if (s === '') return 'Enter an address.';
  const bad = /[^1-9A-HJ-NP-Za-km-z]/u.exec(s)?.[0];
  if (bad !== undefined) return `“${bad}” is not a base58 character (no 0, O, I or l).`;
  if (s.length > 64) return 'Too long for a Solana address.';
  const n = bs58.decodeUnsafe(s)?.length ?? 0;
  return n === 32 ? '' : `Decodes to ${n} bytes; a Solana address has 32.`;
}
