// The stablecoin mints the localnet creates at genesis, at the addresses of
// the real chains (see README.md, "Stablecoin mints", for the sources). The
// localnet's MINT_AUTHORITY is the mint authority of all of them, and of every
// other authority they carry, so tests can mint, freeze and so on.
import { b58decode } from './base58.js';
import { TOKEN_PROGRAM, TOKEN_2022_PROGRAM, packMint, packMint2022, ext } from './token.js';

export const USDC_MAINNET = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const USDC_DEVNET = '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU';
export const USDT_MAINNET = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
// Circle lists one Solana EURC mint; the same address serves mainnet and devnet.
export const EURC = 'HzwqbKZw8HxMN6bF2yFZNrht3c2iXXzpKcFu7uBEDKtr';
export const PYUSD_MAINNET = '2b1kV6DkPAnxd5ixfnxCpjxmKwqjjaYmCZfHsFu24GXo';
export const PYUSD_DEVNET = 'CXk2AMBfi3TwaEL2468s6zP8xq9NxTXjp9gjMgzeUynM';
export const USDG_MAINNET = '2u1tszSeqZ3qBWF3uNGPFc8TzMk2tdiwknnRMWGWjGWH';
export const USDG_DEVNET = '4F6PM96JJxngmHnZLBh9n58RH4aTVNWvDs2nuwrT5BP7';

const PYUSD_URI = 'https://token-metadata.paxos.com/pyusd_metadata/prod/solana/pyusd_metadata.json';

/**
 * Every mint per network: {symbol, mint, program, decimals, extensions}.
 * `extensions` names the Token-2022 extensions the mint carries.
 * USDT has no official devnet mint, so devnet has none.
 */
export const STABLECOINS = Object.freeze({
  mainnet: Object.freeze([
    { symbol: 'USDC', mint: USDC_MAINNET, program: TOKEN_PROGRAM, decimals: 6 },
    { symbol: 'USDT', mint: USDT_MAINNET, program: TOKEN_PROGRAM, decimals: 6 },
    { symbol: 'EURC', mint: EURC, program: TOKEN_PROGRAM, decimals: 6 },
    { symbol: 'PYUSD', mint: PYUSD_MAINNET, program: TOKEN_2022_PROGRAM, decimals: 6 },
    { symbol: 'USDG', mint: USDG_MAINNET, program: TOKEN_2022_PROGRAM, decimals: 6 },
  ]),
  devnet: Object.freeze([
    { symbol: 'USDC', mint: USDC_DEVNET, program: TOKEN_PROGRAM, decimals: 6 },
    { symbol: 'EURC', mint: EURC, program: TOKEN_PROGRAM, decimals: 6 },
    { symbol: 'PYUSD', mint: PYUSD_DEVNET, program: TOKEN_2022_PROGRAM, decimals: 6 },
    { symbol: 'USDG', mint: USDG_DEVNET, program: TOKEN_2022_PROGRAM, decimals: 6 },
  ]),
});

const METADATA = {
  PYUSD: { name: 'PayPal USD', symbol: 'PYUSD', uri: PYUSD_URI },
  USDG: { name: 'Global Dollar', symbol: 'USDG', uri: '' },
};

/**
 * The extensions of a Paxos Token-2022 stablecoin, in the order mainnet PYUSD
 * carries them: MintCloseAuthority, PermanentDelegate, TransferFeeConfig (0
 * bps, maximum 0), ConfidentialTransferMint (no auto-approve, no auditor),
 * ConfidentialTransferFeeConfig, TransferHook (program id unset),
 * MetadataPointer (to the mint itself) and TokenMetadata. On mainnet every
 * one of those authorities is the issuer's; here it is `authority`.
 */
export function paxosExtensions(mint, authority, { name, symbol, uri }) {
  const noFee = { epoch: 0n, maximumFee: 0n, basisPoints: 0 };
  return [
    ext.mintCloseAuthority(authority),
    ext.permanentDelegate(authority),
    ext.transferFeeConfig({ configAuthority: authority, withdrawAuthority: authority, older: noFee, newer: noFee }),
    ext.confidentialTransferMint({ authority, autoApproveNewAccounts: false, auditorElgamalPubkey: null }),
    ext.confidentialTransferFeeConfig({ authority, withdrawWithheldAuthorityElgamalPubkey: null, harvestToMintEnabled: true }),
    ext.transferHook({ authority, programId: null }),
    ext.metadataPointer({ authority, metadataAddress: b58decode(mint) }),
    ext.tokenMetadata({ updateAuthority: authority, mint: b58decode(mint), name, symbol, uri }),
  ];
}

export const EXTENSION_NAMES = Object.freeze([
  'mintCloseAuthority',
  'permanentDelegate',
  'transferFeeConfig',
  'confidentialTransferMint',
  'confidentialTransferFeeConfig',
  'transferHook',
  'metadataPointer',
  'tokenMetadata',
]);

/** Every distinct mint (EURC is on both networks) with the data the chain creates it with. */
export function genesisMints(authority) {
  const seen = new Map();
  for (const list of Object.values(STABLECOINS)) {
    for (const c of list) {
      if (seen.has(c.mint)) continue;
      const data =
        c.program === TOKEN_PROGRAM
          ? packMint({ mintAuthority: authority, supply: 0n, decimals: c.decimals, freezeAuthority: null })
          : packMint2022({
              mintAuthority: authority,
              supply: 0n,
              decimals: c.decimals,
              freezeAuthority: authority,
              extensions: paxosExtensions(c.mint, authority, METADATA[c.symbol]),
            });
      seen.set(c.mint, { ...c, data });
    }
  }
  return [...seen.values()];
}

/** localnet_getMintAuthority's per-network listing. */
export function mintListing() {
  const out = {};
  for (const [network, list] of Object.entries(STABLECOINS)) {
    out[network] = list.map((c) => ({
      symbol: c.symbol,
      mint: c.mint,
      program: c.program,
      decimals: c.decimals,
      ...(c.program === TOKEN_2022_PROGRAM ? { extensions: [...EXTENSION_NAMES] } : {}),
    }));
  }
  return out;
}

/** Every mint address, USDC mainnet and devnet first. */
export const ALL_MINTS = Object.freeze([
  ...new Set([USDC_MAINNET, USDC_DEVNET, ...Object.values(STABLECOINS).flatMap((l) => l.map((c) => c.mint))]),
]);
