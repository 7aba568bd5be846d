// The pay_fetch tool against a seller whose 402 never changes (the same
// MPP challenge beside the same x402 offer on every request):
// internal/httpapi/payfetch_ts_test.go starts it and counts what each
// seller received and the payments the service keeps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { byName, env } from './lib.mjs';

const STATIC = env('STATIC_LANGCHAIN_URL');
const MPP_PRICE = Number(env('MPP_PRICE')) / 1e6;

test('pay_fetch: a 402 that never changes is paid once; asked again it answers already_paid with the earlier payment and pays nothing', async () => {
  const first = JSON.parse(await byName.pay_fetch.invoke({ url: `${STATIC}/weather` }));
  assert.equal(first.status, 200, JSON.stringify(first));
  assert.deepEqual([first.payment.status, first.payment.protocol], ['paid', 'mpp']);
  for (const prefer of [undefined, 'mpp']) {
    const again = JSON.parse(await byName.pay_fetch.invoke({ url: `${STATIC}/weather`, ...(prefer ? { prefer } : {}) }));
    assert.deepEqual(
      [again.status, again.payment.status, again.payment.protocol, again.payment.payment_id, again.payment.amount],
      [402, 'already_paid', 'mpp', first.payment.payment_id, MPP_PRICE],
      JSON.stringify(again),
    );
    assert.ok(['signed', 'settled'].includes(again.payment.state), again.payment.state);
    assert.match(again.next, /do not retry/);
  }
});
