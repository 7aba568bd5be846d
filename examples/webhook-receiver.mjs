// A webhook receiver that verifies every delivery before trusting it.
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 node examples/webhook-receiver.mjs
//
// Register http://<host>:4000/hook as an endpoint (POST /webhook-endpoints);
// the answer's secret is WEBHOOK_SECRET. During a secret rotation, either
// the old or the new secret verifies (both sign for 24 h).
import { createServer } from 'node:http';
import { verifyWebhook, WebhookVerificationError } from '@agentwallet/sdk';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) {
  console.error('set WEBHOOK_SECRET to the endpoint\'s signing secret');
  process.exit(2);
}
const seen = new Set(); // deliveries are at least once: act once per event_id

createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const body = Buffer.concat(chunks); // the raw bytes: verify before parsing
    try {
      const event = await verifyWebhook(body, req.headers, secret);
      res.writeHead(200).end('ok');
      if (seen.has(event.event_id)) return;
      seen.add(event.event_id);
      console.log(`${event.event} ${event.event_id}`, JSON.stringify(event.data));
    } catch (e) {
      res.writeHead(e instanceof WebhookVerificationError ? 400 : 500).end('refused');
      console.error(`refused a delivery: ${e.message}`);
    }
  });
}).listen(Number(process.env.PORT ?? 4000), () => console.log(`listening on :${process.env.PORT ?? 4000}/hook`));
