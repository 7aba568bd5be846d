import type { Network as Net } from '../../services/session';

/** Network says loudly whether payments here move real money. */
export function Network({ network }: { network: Net }) {
  return network === 'mainnet' ? (
    <section
      className="flex flex-wrap items-baseline gap-x-4 gap-y-1 rounded-lg border border-live bg-live px-4 py-3 text-on-live"
      aria-label="Network"
      data-network="mainnet"
    >
      <strong className="text-xl tracking-wide">Mainnet: REAL MONEY</strong>
      <span>Every payment sent or approved in this account moves real USDC.</span>
    </section>
  ) : (
    <section
      className="flex flex-wrap items-baseline gap-x-4 gap-y-1 rounded-lg border border-ok/40 bg-ok-soft px-4 py-3 text-ok"
      aria-label="Network"
      data-network="devnet"
    >
      <strong className="text-lg">Devnet: test tokens</strong>
      <span>Payments in this account move devnet USDC, which has no value.</span>
    </section>
  );
}
