// A Wallet Standard wallet for the browser tests, injected before the page
// loads. It holds no key: signing happens in Node (window.__testWalletSign
// and __testWalletSignIn, exposed by the test), so the page never sees it.
// Knobs in window.__TEST_WALLET__: name, address, publicKey, noSignIn (only
// connect + signMessage), domain (sign a message for another domain).
(() => {
  const cfg = window.__TEST_WALLET__;
  if (!cfg) return;
  const chains = ['solana:devnet', 'solana:mainnet'];
  const account = Object.freeze({
    address: cfg.address,
    publicKey: new Uint8Array(cfg.publicKey),
    chains,
    features: ['solana:signIn', 'solana:signMessage'],
  });
  const features = {
    'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
    'standard:events': { version: '1.0.0', on: () => () => {} },
    'solana:signMessage': {
      version: '1.0.0',
      signMessage: async (...inputs) =>
        Promise.all(
          inputs.map(async ({ message }) => ({
            signedMessage: message,
            signature: new Uint8Array(await window.__testWalletSign(Array.from(message))),
          })),
        ),
    },
  };
  if (!cfg.noSignIn) {
    features['solana:signIn'] = {
      version: '1.0.0',
      signIn: async (...inputs) =>
        Promise.all(
          inputs.map(async (input) => {
            const out = await window.__testWalletSignIn(cfg.domain ? { ...input, domain: cfg.domain } : input);
            return { account, signedMessage: new Uint8Array(out.signedMessage), signature: new Uint8Array(out.signature) };
          }),
        ),
    };
  }
  const icon =
    'data:image/svg+xml;base64,' +
    btoa('<svg xmlns="http://www.w3.org/2000/svg" width="24" height="24"><rect width="24" height="24" rx="6" fill="#7c3aed"/></svg>');
  const wallet = { version: '1.0.0', name: cfg.name || 'Test Wallet', icon, chains, accounts: [account], features };
  const register = ({ register }) => register(wallet);
  try {
    window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
  } catch {} // eslint-disable-line no-empty -- best effort: app-ready below reaches an app that loads later
  window.addEventListener('wallet-standard:app-ready', ({ detail }) => register(detail));
})();
