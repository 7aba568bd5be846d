// client.payFetch against a seller whose 402 never changes (the same MPP
// challenge beside the same x402 offer on every request):
// internal/httpapi/payfetch_ts_test.go starts it and counts what each
// seller received and the payments the service keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ChallengePaidError, ConflictError } from '../dist/index.js';
import { agent, env, WALLET } from './lib.mjs';

const STATIC = env('STATIC_SDK_URL');

test('payFetch: a 402 that never changes is paid once; asked again it throws ChallengePaidError naming the payment, paying neither protocol', async () => {
  const first = await agent.payFetch(`${STATIC}/weather`, undefined, { walletId: WALLET });
  assert.equal(first.response.status, 200, await first.response.clone().text());
  assert.equal((await first.response.json()).report, 'sunny');
  assert.deepEqual([first.payment.protocol, first.payment.status], ['mpp', 'paid']);
  for (const opts of [{}, { prefer: 'mpp' }, { only: 'mpp' }]) {
    const err = await agent.payFetch(`${STATIC}/weather`, undefined, { walletId: WALLET, ...opts }).catch((e) => e);
    assert.ok(err instanceof ChallengePaidError && err instanceof ConflictError, `${JSON.stringify(opts)}: got ${err}`);
    assert.deepEqual([err.status, err.reason, err.protocol, err.paymentId], [409, 'already_paid', 'mpp', first.payment.paymentId]);
  }
  const earlier = await agent.mpp.payments.get(first.payment.paymentId);
  assert.equal(earlier.wallet_id, WALLET);
});
