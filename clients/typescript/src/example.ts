// A typed walk through the paymentsd API with openapi-fetch and the types openapi-typescript
// generated from ../../openapi.yaml (src/schema.d.ts; `npm run generate`).
//
//   PAYMENTS_BASE_URL=http://127.0.0.1:8080 PAYMENTS_SECRET_KEY=sk_live_… node dist/example.js
//
// It lists chains (public), creates a 1000-cent payment, reads it back, lists payments, and
// checks that a 399-cent payment is refused with 400 `invalid_amount`. Any unexpected status or
// body exits 1 with a message saying what differed; success prints a short summary.
//
// The types follow the typed-schema shape (`openapi.yaml`, `--response-shape schema`): run it
// against a server in that shape. A `guide` server accepts 399 cents and sends numeric chain ids.
import createClient from "openapi-fetch";
import type { components, paths } from "./schema.js";

type ApiError = components["schemas"]["Error"];

const REQUEST_TIMEOUT_MS = 10_000;

class Unexpected extends Error {
  override name = "Unexpected";
}

function fail(what: string, detail?: unknown): never {
  const suffix = detail === undefined ? "" : `: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`;
  throw new Unexpected(`${what}${suffix}`);
}

function check(cond: boolean, what: string, detail?: unknown): asserts cond {
  if (!cond) fail(what, detail);
}

function requireEnv(name: string): string {
  const v = process.env[name]?.trim();
  if (!v) {
    throw new Unexpected(`environment variable ${name} is not set`);
  }
  return v;
}

// describe renders a failed call for a message: status plus the typed error body, if any.
function describe(res: Response, error: ApiError | undefined): string {
  const e = error?.error;
  return e ? `HTTP ${res.status} ${e.code}: ${e.message}` : `HTTP ${res.status}`;
}

// Every request gets a deadline, so a hung server fails the example instead of stalling it.
const timedFetch = (req: Request): Promise<Response> => fetch(req, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });

async function main(): Promise<void> {
  const baseUrl = requireEnv("PAYMENTS_BASE_URL").replace(/\/+$/, "");
  const secretKey = requireEnv("PAYMENTS_SECRET_KEY");

  // The chain list is public: a client without the key.
  const publicApi = createClient<paths>({ baseUrl, fetch: timedFetch });
  // Merchant endpoints authenticate with the secret key header on every request.
  const api = createClient<paths>({ baseUrl, fetch: timedFetch, headers: { "X-Service-Secret-Key": secretKey } });

  // 1. Chains (public).
  const chains = await publicApi.GET("/v1/external/chains", { params: { query: { limit: 100 } } });
  if (chains.error !== undefined || chains.response.status !== 200) {
    fail("list chains", describe(chains.response, chains.error));
  }
  const enabled = chains.data.data.filter((c) => c.isEnabled);
  check(chains.data.data.length > 0, "list chains: empty list");
  check(enabled.length > 0, "list chains: no chain is enabled on this deployment");

  // 2. Create a 1000-cent payment, retry-safe with an Idempotency-Key.
  const orderId = `ts-example-${Date.now()}-${process.pid}`;
  const created = await api.POST("/v1/external/secretkey-auth/payments", {
    params: { header: { "Idempotency-Key": orderId } },
    body: { amount: 1000, currency: "USD", orderId },
  });
  if (created.error !== undefined || created.response.status !== 201) {
    fail("create payment (expected 201)", describe(created.response, created.error));
  }
  const { paymentId, payment: createdPayment, paymentUrl } = created.data;
  check(createdPayment.id === paymentId, "create payment: payment.id differs from paymentId", { paymentId, id: createdPayment.id });
  check(createdPayment.amountInCents === 1000, "create payment: amountInCents", createdPayment.amountInCents);
  check(createdPayment.status === "pending", "create payment: status", createdPayment.status);
  check(createdPayment.quotes.length > 0, "create payment: no quotes");
  check(paymentUrl.includes(paymentId), "create payment: paymentUrl does not name the payment", paymentUrl);

  // 3. Read it back by id.
  const read = await api.GET("/v1/external/secretkey-auth/payments/{paymentId}", {
    params: { path: { paymentId } },
  });
  if (read.error !== undefined || read.response.status !== 200) {
    fail(`get payment ${paymentId}`, describe(read.response, read.error));
  }
  const payment = read.data;
  check(payment.id === paymentId, "get payment: id", payment.id);
  check(payment.amountInCents === 1000, "get payment: amountInCents", payment.amountInCents);
  check(payment.currency === "USD", "get payment: currency", payment.currency);
  check(payment.orderId === orderId, "get payment: orderId", payment.orderId);

  // 4. List payments, newest first: the one just created leads the page.
  const list = await api.GET("/v1/external/secretkey-auth/payments", { params: { query: { limit: 5 } } });
  if (list.error !== undefined || list.response.status !== 200) {
    fail("list payments", describe(list.response, list.error));
  }
  const page = list.data;
  check(page.pagination.limit === 5, "list payments: pagination.limit", page.pagination.limit);
  check(page.data.length >= 1 && page.data.length <= 5, "list payments: page size", page.data.length);
  check(page.pagination.total >= 1, "list payments: pagination.total", page.pagination.total);
  check(page.data.some((p) => p.id === paymentId), "list payments: the new payment is not on the first page", page.data.map((p) => p.id));

  // 5. Below the 400-cent minimum: a typed 400 error body with code invalid_amount.
  const tooSmall = await api.POST("/v1/external/secretkey-auth/payments", {
    body: { amount: 399, currency: "USD", orderId: `${orderId}-too-small` },
  });
  if (tooSmall.error === undefined) {
    fail(`create 399-cent payment: expected 400 invalid_amount, got HTTP ${tooSmall.response.status}`, tooSmall.data);
  }
  check(tooSmall.response.status === 400, "create 399-cent payment: expected HTTP 400", describe(tooSmall.response, tooSmall.error));
  const refusal: ApiError = tooSmall.error;
  check(refusal.error.code === "invalid_amount", "create 399-cent payment: expected error.code invalid_amount", refusal.error);

  console.log(
    [
      `ok: ${baseUrl}`,
      `  chains:   ${chains.data.data.length} listed, ${enabled.length} enabled (${enabled.map((c) => c.chainId).slice(0, 4).join(", ")}${enabled.length > 4 ? ", …" : ""})`,
      `  created:  payment ${paymentId} for ${payment.amountInCents} cents ${payment.currency}, order ${orderId}, ${payment.quotes.length} quote(s), status ${payment.status}`,
      `  listed:   ${page.data.length} of ${page.pagination.total} payment(s) with limit 5; the new one included`,
      `  refused:  399 cents → HTTP 400 ${refusal.error.code} (${refusal.error.message})`,
    ].join("\n"),
  );
}

main().catch((err: unknown) => {
  if (err instanceof Unexpected) {
    console.error(`example FAILED: ${err.message}`);
  } else {
    // Network errors, timeouts, unparsable bodies.
    const cause = err instanceof Error && err.cause instanceof Error ? ` (${err.cause.message})` : "";
    console.error(`example FAILED: ${err instanceof Error ? err.message : String(err)}${cause}`);
  }
  process.exit(1);
});
