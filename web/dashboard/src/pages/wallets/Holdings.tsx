import { money } from '../../format';
import type { Balance } from '../../services/wallets';

/** Holding is an amount of one asset the wallet holds: a symbol of GET /assets, or SOL. */
export type Holding = { symbol: string; amount: number };

/**
 * holdingsOf is every asset of the network (symbols, in GET /assets'
 * order) with what the balance holds of it, zero without a token account,
 * then any other asset the balance names, then SOL. Without the network's
 * list (not read yet), the balance's own assets.
 */
export function holdingsOf(balance: Balance, network: string[] = []): Holding[] {
  const held = new Map(balance.assets.map((a) => [a.symbol, a.amount]));
  const symbols = [...network, ...balance.assets.map((a) => a.symbol).filter((s) => !network.includes(s))];
  return [...symbols.map((symbol) => ({ symbol, amount: held.get(symbol) ?? 0 })), { symbol: 'SOL', amount: balance.sol }];
}

/**
 * Holdings is the wallet's balance of each asset of its network, SOL
 * last, read from the chain; a dash while it is unknown. assets are the
 * network's symbols (GET /assets), once read.
 */
export function Holdings({ balance, assets }: { balance?: Balance; assets?: string[] }) {
  if (!balance) return <p className="m-0 text-lg font-semibold">—</p>;
  return (
    <ul aria-label="Balance of each asset" className="m-0 flex list-none flex-wrap gap-2 p-0">
      {holdingsOf(balance, assets).map((h) => (
        <li
          key={h.symbol}
          data-testid={h.symbol === 'USDC' ? 'balance-usdc' : h.symbol === 'SOL' ? 'balance-sol' : 'balance-asset'}
          data-asset={h.symbol}
          className={`min-w-32 rounded-md border border-line px-3 py-2 tabular-nums ${h.amount === 0 ? 'text-muted' : ''}`}
        >
          <span className="block text-lg font-semibold whitespace-nowrap">{money(h.amount, h.symbol)}</span>
        </li>
      ))}
    </ul>
  );
}
