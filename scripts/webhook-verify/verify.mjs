// Reads {secret, body_base64, headers} on stdin and verifies the delivery
// with @octokit/webhooks-methods (X-Service-Signature, the GitHub form) and
// with standardwebhooks (webhook-id/-timestamp/-signature). Prints
// {"octokit": bool, "standard": bool, "error": string|null}.
import { verify } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const { secret, body_base64: b64, headers } = JSON.parse(input);
const body = Buffer.from(b64, "base64").toString("utf8");
const out = { octokit: false, standard: false, error: null };
try {
  out.octokit = await verify(secret, body, headers["X-Service-Signature"]);
} catch (e) {
  out.error = `octokit: ${e.message}`;
}
try {
  new Webhook(secret).verify(body, {
    "webhook-id": headers["webhook-id"],
    "webhook-timestamp": headers["webhook-timestamp"],
    "webhook-signature": headers["webhook-signature"],
  });
  out.standard = true;
} catch (e) {
  out.error = (out.error ? out.error + "; " : "") + `standardwebhooks: ${e.message}`;
}
process.stdout.write(JSON.stringify(out));
