// Sign-In With Solana through the Wallet Standard: the server issues the
// input, the wallet signs it (solana:signIn, or connect + signMessage of
// the same text), the server verifies it and starts a session.
import { getWallets } from '@wallet-standard/app';
import type { Wallet, WalletAccount } from '@wallet-standard/base';
import { type Session, type SignInInput, challenge, verify } from './services/session';

interface SignInOutput {
  account: WalletAccount;
  signedMessage: Uint8Array;
  signature: Uint8Array;
}

type SignInFeature = { signIn(...inputs: SignInInput[]): Promise<SignInOutput[]> };
type SignMessageFeature = {
  signMessage(...inputs: { account: WalletAccount; message: Uint8Array }[]): Promise<{ signedMessage: Uint8Array; signature: Uint8Array }[]>;
};
type ConnectFeature = { connect(): Promise<{ accounts: readonly WalletAccount[] }> };

/** solanaWallets lists the registered wallets that can sign a Solana sign-in. */
export function solanaWallets(): Wallet[] {
  return getWallets()
    .get()
    .filter(
      (w) =>
        w.chains.some((c) => c.startsWith('solana:')) &&
        ('solana:signIn' in w.features || ('standard:connect' in w.features && 'solana:signMessage' in w.features)),
    );
}

/** onWalletsChange calls fn whenever a wallet registers or leaves. */
export function onWalletsChange(fn: () => void): () => void {
  const { on } = getWallets();
  const offs = [on('register', fn), on('unregister', fn)];
  return () => offs.forEach((off) => off());
}

/** messageText renders a sign-in input as the standard's text (what the server compares). */
export function messageText(input: SignInInput, address: string): string {
  let m = `${input.domain} wants you to sign in with your Solana account:\n${address}`;
  if (input.statement) m += `\n\n${input.statement}`;
  const fields: string[] = [];
  if (input.uri) fields.push(`URI: ${input.uri}`);
  if (input.version) fields.push(`Version: ${input.version}`);
  if (input.nonce) fields.push(`Nonce: ${input.nonce}`);
  if (input.issuedAt) fields.push(`Issued At: ${input.issuedAt}`);
  if (input.expirationTime) fields.push(`Expiration Time: ${input.expirationTime}`);
  if (fields.length) m += `\n\n${fields.join('\n')}`;
  return m;
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** signIn runs the whole sign-in with wallet and answers the new session. */
export async function signIn(wallet: Wallet): Promise<Session> {
  // The server owns the input: it checks the signed text against the one it issued.
  const input = await challenge();
  let address: string;
  let message: Uint8Array;
  let signature: Uint8Array;
  const feature = wallet.features as Record<string, unknown>;
  if ('solana:signIn' in feature) {
    const [out] = await (feature['solana:signIn'] as SignInFeature).signIn(input);
    ({ signedMessage: message, signature } = out);
    address = out.account.address;
  } else {
    const { accounts } = await (feature['standard:connect'] as ConnectFeature).connect();
    const account = accounts[0];
    if (!account) throw new Error('the wallet shared no account');
    address = account.address;
    const text = new TextEncoder().encode(messageText(input, address));
    const [out] = await (feature['solana:signMessage'] as SignMessageFeature).signMessage({ account, message: text });
    ({ signedMessage: message, signature } = out);
  }
  return verify({
    nonce: input.nonce,
    address,
    message: base64(message),
    signature: base64(signature),
  });
}
