import bs58 from 'bs58';
import { expect, test } from 'vitest';
import { addressProblem } from './address';

const ADDRESS = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

test.each([
  ['a 32-byte key', ADDRESS, ''],
  ['the system program (32 zero bytes)', '11111111111111111111111111111111', ''],
  ['32 bytes of 0xff', bs58.encode(new Uint8Array(32).fill(0xff)), ''],
  ['nothing', '', 'Enter an address.'],
  ['a zero', `${ADDRESS.slice(0, 10)}0`, '“0” is not a base58 character (no 0, O, I or l).'],
  ['a capital O', 'O', '“O” is not a base58 character (no 0, O, I or l).'],
  ['a lower-case l', `${ADDRESS}l`, '“l” is not a base58 character (no 0, O, I or l).'],
  ['a space inside', '9WzD XwBb', '“ ” is not a base58 character (no 0, O, I or l).'],
  ['too many characters', '2'.repeat(65), 'Too long for a Solana address.'],
  ['a prefix of an address', ADDRESS.slice(0, 20), 'Decodes to 15 bytes; a Solana address has 32.'],
  ['33 bytes', bs58.encode(new Uint8Array(33).fill(1)), 'Decodes to 33 bytes; a Solana address has 32.'],
  ['a leading zero byte too many', `1${ADDRESS}`, 'Decodes to 33 bytes; a Solana address has 32.'],
])('%s', (_, s, want) => {
  expect(addressProblem(s)).toBe(want);
});
