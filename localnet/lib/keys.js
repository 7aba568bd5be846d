// Ed25519 helpers on top of node:crypto (synchronous).
import crypto from 'node:crypto';

const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** A keypair derived deterministically from a 32-byte seed. */
export function keypairFromSeed(seed) {
  const privateKey = crypto.createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, Buffer.from(seed)]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = crypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  return {
    publicKey,
    privateKey,
    // solana-keygen layout: 32-byte seed followed by the 32-byte public key
    secretKey: Uint8Array.from([...seed, ...publicKey]),
  };
}

/** A keypair whose seed is sha256(label). */
export function keypairFromLabel(label) {
  return keypairFromSeed(crypto.createHash('sha256').update(label).digest());
}

export function sign(keypair, message) {
  return new Uint8Array(crypto.sign(null, message, keypair.privateKey));
}

const pubkeyCache = new Map();
function publicKeyObject(pubkey) {
  const k = Buffer.from(pubkey).toString('hex');
  let o = pubkeyCache.get(k);
  if (!o) {
    o = crypto.createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(pubkey)]), format: 'der', type: 'spki' });
    if (pubkeyCache.size > 10000) pubkeyCache.clear();
    pubkeyCache.set(k, o);
  }
  return o;
}

export function verify(pubkey, message, signature) {
  try {
    return crypto.verify(null, message, publicKeyObject(pubkey), signature);
  } catch {
    return false;
  }
}

export function sha256(...parts) {
  const h = crypto.createHash('sha256');
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}
