// An example merchant endpoint for paymentsd webhooks in TypeScript (Node 20+, no dependencies
// beyond the generated types): it verifies the Standard Webhooks signature, refuses stale
// timestamps, de-duplicates by webhook-id (retries and redeliveries carry the same id) and
// narrows the body with the generated WebhookEvent type.
//
//   WEBHOOK_SECRET=whsec_… PORT=9000 node dist/webhook-receiver.js
//
// The standardwebhooks npm package does the same verification; this shows what it checks.
// Production receivers keep seen ids in their database, in the transaction that acts on the
// event, and answer 2xx only after that commits.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { components } from "./schema.js";

export type WebhookEvent = components["schemas"]["WebhookEvent"];

const toleranceSeconds = 5 * 60;

/** Verifies a delivery and returns its event; throws when the signature or timestamp is bad. */
export function verifyWebhook(secret: string, headers: IncomingHttpHeaders, body: Buffer, now = Date.now()): WebhookEvent {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (typeof id !== "string" || typeof timestamp !== "string" || typeof signatures !== "string") {
    throw new Error("missing webhook headers");
  }
  const ts = Number(timestamp);
  if (!Number.isInteger(ts) || Math.abs(now / 1000 - ts) > toleranceSeconds) {
    throw new Error("stale or malformed webhook-timestamp");
  }
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
  // Several space-separated "v1,<base64>" signatures during a secret rotation: any may match.
  const ok = signatures.split(" ").some((part) => {
    const [version, sig] = part.split(",", 2);
    if (version !== "v1" || sig === undefined) return false;
    const given = Buffer.from(sig, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!ok) throw new Error("no matching signature");
  return JSON.parse(body.toString("utf8")) as WebhookEvent;
}

/** Runs the receiver: verifies, de-duplicates, logs each new event. */
export function serve(secret: string, port: number, onEvent: (ev: WebhookEvent) => void) {
  const seen = new Set<string>();
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      let ev: WebhookEvent;
      try {
        ev = verifyWebhook(secret, req.headers, Buffer.concat(chunks));
      } catch (e) {
        res.writeHead(401).end(String(e));
        return;
      }
      if (!seen.has(ev.id)) {
        seen.add(ev.id);
        onEvent(ev);
      }
      res.writeHead(204).end();
    });
  }).listen(port);
}

if (process.argv[1]?.endsWith("webhook-receiver.js")) {
  const secret = process.env["WEBHOOK_SECRET"];
  if (!secret) throw new Error("set WEBHOOK_SECRET to the endpoint's whsec_ secret");
  serve(secret, Number(process.env["PORT"] ?? 9000), (ev) => {
    const o = ev.data.object;
    console.log(`verified ${ev.type} ${ev.id} status=${o.status} at=${"updatedAt" in o ? o.updatedAt : ev.createdAt}`);
  });
}
