// Runs the official x402 packages on the service's x402 buyer output (used
// by internal/x402's tests). Reads one JSON request on stdin, prints one
// JSON answer.
//
// {"mode":"encode","payment_required":{...},"settle_response":{...}}
//   -> {"payment_required_header","payment_response_header"}: the official
//      encoders' header values, for our decoders.
// {"mode":"check","header_name","header_value","payment_required":{...},
//  "fee_payer_secret":"<base64 of 64 bytes>","rpc_url","settle":bool}
//   -> decodes the header with @x402/core, validates it with its schema,
//      finds the requirement it pays as the seller does (deep equality in
//      v2, scheme and network in v1), and runs the @x402/svm facilitator's
//      verify (its layout rules, then a simulation on rpc_url) and, when
//      settle is set, its settle (signs as fee payer, sends, confirms).
import { createKeyPairSignerFromBytes } from "@solana/kit";
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from "@x402/core/http";
import { PaymentPayloadSchema, PaymentRequiredSchema } from "@x402/core/schemas";
import { deepEqual } from "@x402/core/utils";
import { toFacilitatorSvmSigner } from "@x402/svm";
import { ExactSvmScheme } from "@x402/svm/exact/facilitator";
import { ExactSvmSchemeV1 } from "@x402/svm/exact/v1/facilitator";

let input = "";
for await (const chunk of process.stdin) input += chunk;
const req = JSON.parse(input);
const out = {};

const bigintSafe = (_, v) => (typeof v === "bigint" ? v.toString() : v);

try {
  if (req.mode === "encode") {
    out.payment_required_header = encodePaymentRequiredHeader(req.payment_required);
    out.payment_response_header = encodePaymentResponseHeader(req.settle_response);
  } else {
    const challenge = PaymentRequiredSchema.safeParse(req.payment_required);
    out.challenge_valid = challenge.success;
    if (!challenge.success) out.challenge_error = challenge.error.message;

    const expectedName = req.payment_required.x402Version === 2 ? "PAYMENT-SIGNATURE" : "X-PAYMENT";
    out.header_name_ok = req.header_name === expectedName;
    const payload = decodePaymentSignatureHeader(req.header_value);
    out.decoded = payload;
    const parsed = PaymentPayloadSchema.safeParse(payload);
    out.payload_valid = parsed.success;
    if (!parsed.success) out.payload_error = parsed.error.message;

    const accepts = req.payment_required.accepts;
    out.matched_index =
      payload.x402Version === 2
        ? accepts.findIndex(r => deepEqual(r, payload.accepted))
        : accepts.findIndex(r => r.scheme === payload.scheme && r.network === payload.network);
    if (out.matched_index >= 0) {
      const requirements = accepts[out.matched_index];
      const keypair = await createKeyPairSignerFromBytes(
        Uint8Array.from(Buffer.from(req.fee_payer_secret, "base64")),
      );
      const signer = toFacilitatorSvmSigner(keypair, { defaultRpcUrl: req.rpc_url });
      const facilitator =
        payload.x402Version === 2 ? new ExactSvmScheme(signer) : new ExactSvmSchemeV1(signer);
      out.verify = await facilitator.verify(payload, requirements);
      if (req.settle && out.verify.isValid) {
        out.settle = await facilitator.settle(payload, requirements);
      }
    }
  }
} catch (e) {
  out.error = e instanceof Error ? e.message : String(e);
}
process.stdout.write(JSON.stringify(out, bigintSafe));
