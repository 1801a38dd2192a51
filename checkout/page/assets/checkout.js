// The hosted checkout page. The payment's secret is in the URL fragment (#secret=…), which the
// browser never sends to the server; this script reads it and sends it in the
// X-Service-Payment-Secret header of the payment-secret API. No third-party code, no build step.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const paymentId = document.body.dataset.paymentId;
  const devnet = document.body.dataset.devnet === "true";
  const devnetChainIds = [1337, 31337]; // the embedded devnet's chains (chains.IsDevnet)
  // The test wallet pays only a test-mode payment's devnet quote (the server refuses anything else).
  const testWallet = (v, q) => devnet && v.livemode === false && devnetChainIds.includes(q.evmChainId);
  const secret = new URLSearchParams(location.hash.slice(1)).get("secret") || "";
  const api = `/v1/external/payment-secret-auth/payments/${encodeURIComponent(paymentId)}`;
  const headers = { "X-Service-Payment-Secret": secret };

  let view = null;
  let etag = "";
  let skewMs = 0; // server clock − this clock
  let qrFor = "";
  let redirectTimer = 0;
  let pollTimer = 0;

  const terminal = (s) => ["completed", "failed", "expired", "cancelled"].includes(s);
  const now = () => Date.now() + skewMs;
  const usd = (cents) => new Intl.NumberFormat(undefined, { style: "currency", currency: "USD" }).format(cents / 100);

  function fail(message) {
    $("error").textContent = message;
    $("error").hidden = false;
  }

  async function call(path, init) {
    const res = await fetch(api + path, { cache: "no-store", ...init, headers: { ...headers, ...(init && init.headers) } });
    if (res.status === 404 || res.status === 401) {
      stop();
      fail("This payment link is not valid. Check that you opened the complete link the merchant gave you.");
      return null;
    }
    if (res.status === 429) {
      const wait = Number(res.headers.get("Retry-After") || "2");
      schedule(wait * 1000);
      return null;
    }
    return res;
  }

  async function load() {
    if (!secret) {
      fail("This payment link is incomplete: its secret is missing.");
      return;
    }
    try {
      await poll();
      $("offline").hidden = true;
    } catch {
      // A network error or a garbled answer: say so, and keep trying.
      $("offline").hidden = false;
      schedule(5000);
    }
  }

  async function poll() {
    const res = await call("", { headers: etag ? { "If-None-Match": etag } : {} });
    if (!res) return;
    if (res.status === 304) {
      const date = Date.parse(res.headers.get("Date") || "");
      if (!Number.isNaN(date)) skewMs = date - Date.now();
      schedule(interval());
      return;
    }
    if (!res.ok) {
      schedule(5000);
      return;
    }
    etag = res.headers.get("ETag") || "";
    show(await res.json());
    schedule(interval());
  }

  // applyAccent sets the merchant's accent colour as the page's --accent (and a readable
  // --on-accent) through the CSSOM, which the strict CSP allows (no inline style attribute or
  // element). Only an exact #rrggbb gets there; anything else keeps the page's own colours.
  function applyAccent(c) {
    const root = document.documentElement.style;
    if (typeof c !== "string" || !/^#[0-9a-fA-F]{6}$/.test(c)) {
      root.removeProperty("--accent");
      root.removeProperty("--on-accent");
      return;
    }
    const [r, g, b] = [1, 3, 5].map((i) => {
      const x = parseInt(c.slice(i, i + 2), 16) / 255;
      return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4);
    });
    const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    root.setProperty("--accent", c);
    root.setProperty("--on-accent", luminance > 0.4 ? "#0b1020" : "#ffffff");
  }

  function show(v) {
    view = v;
    skewMs = Date.parse(v.serverTime) - Date.now();
    $("error").hidden = true;
    const shown = v.merchantDisplayName || v.merchantName;
    $("merchant").textContent = shown;
    $("test-mode").hidden = v.livemode !== false;
    document.title = `Pay ${shown}`;
    applyAccent(v.accentColor);
    if (v.merchantLogoUrl && /^https:\/\//.test(v.merchantLogoUrl)) {
      $("logo").src = v.merchantLogoUrl;
      $("logo").hidden = false;
    }
    $("amount").textContent = v.amountInCents != null ? usd(v.amountInCents) : "Any amount you choose";
    showStatus(v);
    showQuotes(v);
    showSelected(v);
    showOverpaid(v);
    if (v.status === "completed" && v.redirectUrl && /^https?:\/\//i.test(v.redirectUrl)) {
      $("done").hidden = false;
      $("redirect").href = v.redirectUrl;
      // Not while the overpaid amount is offered back: the customer may want it first.
      if (!redirectTimer && !offered(v)) redirectTimer = setTimeout(() => location.assign(v.redirectUrl), 5000);
    }
    document.dispatchEvent(new CustomEvent("checkout:view", { detail: v })); // wallet.js: the wallet buttons
  }

  // The merchant offers an overpaying customer the excess back (Checkout.overpaymentRefund):
  // the button asks for the refund (once per payment; asking again answers the same one) and
  // opens its claim page, on this origin.
  const offered = (v) => v.status === "completed" && !!v.overpaymentRefund;

  function showOverpaid(v) {
    const o = offered(v) ? v.overpaymentRefund : null;
    $("overpaid").hidden = !o;
    if (!o) return;
    const text = `You sent ${units(o.excessAmountAsset, o.tokenDecimals)} ${o.tokenSymbol} more than was due. ${v.merchantDisplayName || v.merchantName} offers it back: choose where to receive it.`;
    if ($("overpaid-text").textContent !== text) $("overpaid-text").textContent = text;
  }

  async function claimOverpaid() {
    const b = $("overpaid-claim");
    b.disabled = true;
    try {
      const res = await call("/overpayment-refund", { method: "POST" });
      if (!res) return;
      const body = await res.json().catch(() => null);
      if (!res.ok) {
        const msg = (body && body.error && body.error.message) || `the server answered ${res.status}`;
        fail(res.status === 409 ? `The overpaid amount cannot be refunded here: ${msg}. Please contact the merchant.` : `Something went wrong: ${msg}.`);
        return;
      }
      let hash = "";
      try {
        hash = new URL(body.claimUrl).hash;
      } catch {
        hash = "";
      }
      location.assign(`/refund/${encodeURIComponent(body.refundId)}${hash}`);
    } catch {
      fail("The refund could not be asked for: the connection failed. Try again.");
    } finally {
      b.disabled = false;
    }
  }

  function quoteOf(v, id) {
    return v.quotes.find((q) => q.id === id) || null;
  }

  function showStatus(v) {
    const el = $("status");
    let text = "";
    let tone = "";
    const r = v.received;
    const q = r ? quoteOf(v, r.quoteId) : null;
    switch (v.status) {
      case "pending":
        text = "Waiting for your payment.";
        break;
      case "processing":
        if (r && r.dueAsset !== "0" && q) {
          text = `Underpaid: still due ${units(r.dueAsset, q.tokenDecimals)} ${q.tokenSymbol}.`;
          tone = "warn";
        } else if (v.confirmations) {
          text = `Payment seen — confirming (${v.confirmations.seen} of ${v.confirmations.required}).`;
        } else {
          text = "Payment seen — confirming.";
        }
        break;
      case "completed":
        text = "Paid. Thank you!";
        if (r && q && BigInt(r.amountAsset) > BigInt(q.amountAsset)) text += " (You sent more than was due.)";
        if (v.redirectUrl && !offered(v)) text += " Returning to the merchant in a few seconds…";
        tone = "ok";
        break;
      case "expired":
        text = "This payment expired.";
        tone = "bad";
        break;
      default:
        text = `This payment is ${v.status}.`;
        tone = "bad";
    }
    if (el.textContent !== text) el.textContent = text;
    el.className = `status ${tone}`;
    $("choose").hidden = terminal(v.status) || v.status === "processing";
  }

  // Quotes grouped by chain, as radio buttons (keyboard: arrows move, space selects).
  let shownQuotes = "";

  function showQuotes(v) {
    const box = $("quotes");
    const key = v.quotes.map((q) => `${q.id}:${q.status}:${q.id === v.selectedQuoteId}`).join(",");
    if (key === shownQuotes) return; // unchanged: keep the elements (and the keyboard focus)
    shownQuotes = key;
    const focused = document.activeElement && document.activeElement.name === "quote" ? document.activeElement.value : "";
    const chains = new Map();
    for (const q of v.quotes) {
      if (q.status !== "active" && q.status !== "expired") continue;
      if (!chains.has(q.chainName)) chains.set(q.chainName, []);
      chains.get(q.chainName).push(q);
    }
    box.replaceChildren();
    for (const [chain, qs] of chains) {
      const fs = document.createElement("fieldset");
      const legend = document.createElement("legend");
      legend.textContent = chain;
      fs.append(legend);
      for (const q of qs) {
        const label = document.createElement("label");
        const input = document.createElement("input");
        input.type = "radio";
        input.name = "quote";
        input.value = q.id;
        input.checked = q.id === v.selectedQuoteId;
        input.disabled = q.status !== "active";
        input.addEventListener("change", () => select(q.id));
        const name = document.createElement("span");
        name.append(input, `${q.tokenSymbol}`);
        const amount = document.createElement("span");
        amount.textContent = v.type === "deposit" ? "any amount" : `${units(q.amountAsset, q.tokenDecimals)} ${q.tokenSymbol}`;
        if (q.status !== "active") {
          label.className = "expired";
          amount.textContent += " (expired)";
        }
        label.append(name, amount);
        fs.append(label);
      }
      box.append(fs);
    }
    if (focused) {
      const again = box.querySelector(`input[value="${CSS.escape(focused)}"]`);
      if (again) again.focus();
    }
  }

  function showSelected(v) {
    const q = v.selectedQuoteId ? quoteOf(v, v.selectedQuoteId) : null;
    const open = q && !terminal(v.status);
    $("pay").hidden = !open;
    if (!open) return;
    const r = v.received;
    const due = r && r.quoteId === q.id && r.dueAsset !== "0" ? units(r.dueAsset, q.tokenDecimals) : "";
    $("pay-title").textContent = due ? "Send the rest" : v.type === "deposit" ? "Send any amount" : "Send exactly";
    const shown = due || (v.type === "deposit" ? "" : units(q.amountAsset, q.tokenDecimals));
    $("amount-asset").textContent = shown ? `${shown} ${q.tokenSymbol}` : `any amount of ${q.tokenSymbol}`;
    $("amount-asset").dataset.value = shown;
    // The QR code and the wallet link ask for the full amount: not shown when only the rest is due.
    $("qr").parentElement.hidden = $("wallet").parentElement.hidden = Boolean(due);
    $("address").textContent = q.depositAddress;
    $("contract").textContent = q.contractAddress || "";
    $("contract-row").hidden = $("contract-label").hidden = !q.contractAddress;
    $("warning").textContent = `Send only ${q.tokenSymbol} on ${q.chainName} (chain id ${q.evmChainId}). Any other token or network is lost.`;
    $("wallet").href = q.paymentUri;
    $("devnet-pay").hidden = !testWallet(v, q) || q.status !== "active" || v.status !== "pending";
    if (qrFor !== q.id && !due) {
      qrFor = q.id;
      loadQR(q.id);
    }
    tick();
  }

  async function loadQR(quoteId) {
    let blob;
    try {
      const res = await call(`/quotes/${quoteId}/qr`);
      if (!res || !res.ok) throw new Error("no QR code");
      blob = await res.blob();
    } catch {
      if (qrFor === quoteId) qrFor = ""; // the next view tries again
      return;
    }
    if (qrFor !== quoteId) return; // another quote was chosen meanwhile
    const url = URL.createObjectURL(blob);
    const img = $("qr");
    const old = img.src;
    img.src = url;
    if (old.startsWith("blob:")) URL.revokeObjectURL(old);
  }

  // The countdown to the selected quote's expiry, by the server's clock.
  function tick() {
    if (!view || !view.selectedQuoteId) return;
    const q = quoteOf(view, view.selectedQuoteId);
    if (!q) return;
    const left = Math.max(0, Date.parse(q.expiresAt) - now());
    const expired = left === 0 || q.status !== "active";
    const m = Math.floor(left / 60000);
    const s = Math.floor((left % 60000) / 1000);
    $("countdown").textContent = expired ? "This quote expired." : `This quote is valid for ${m}:${String(s).padStart(2, "0")}.`;
    $("refresh").hidden = !expired || view.status !== "pending";
    $("devnet-pay").hidden = !testWallet(view, q) || expired || view.status !== "pending";
  }

  async function select(quoteId) {
    const res = await call("/select-quote", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ quoteId }),
    });
    if (!res) return;
    if (res.status === 409) {
      fail("That quote is no longer available: choose another or get a new quote.");
      return;
    }
    if (res.ok) {
      etag = "";
      show(await res.json());
    }
  }

  async function refresh() {
    const res = await call("/refresh-quotes", { method: "POST" });
    if (!res) return;
    if (res.status === 409) {
      fail("This payment can no longer get new quotes.");
      return;
    }
    if (res.ok) {
      etag = "";
      show(await res.json());
    }
  }

  async function devnetPay() {
    if (!view || !view.selectedQuoteId) return;
    $("devnet-pay").disabled = true;
    try {
      const res = await fetch(`/pay/${encodeURIComponent(paymentId)}/devnet-pay`, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/json" },
        body: JSON.stringify({ quoteId: view.selectedQuoteId }),
      });
      if (!res.ok) {
        const body = await res.json().catch(() => null);
        fail("The test wallet could not pay: " + ((body && body.error && body.error.message) || res.status));
      }
    } catch {
      fail("The test wallet could not be reached.");
    } finally {
      $("devnet-pay").disabled = false;
    }
    schedule(500);
  }

  // Whole tokens for people (amounts.js); the API's figures and the URI stay exact.
  function units(smallest, decimals) {
    return checkoutAmounts.format(smallest, decimals);
  }

  function interval() {
    if (!view) return 3000;
    if (terminal(view.status)) return 0;
    return view.status === "processing" ? 5000 : 3000;
  }

  function schedule(ms) {
    clearTimeout(pollTimer);
    if (ms > 0) pollTimer = setTimeout(load, ms);
  }

  function stop() {
    clearTimeout(pollTimer);
  }

  for (const b of document.querySelectorAll("button.copy")) {
    b.addEventListener("click", async () => {
      const el = $(b.dataset.copy);
      const text = el.dataset.value || el.textContent;
      try {
        await navigator.clipboard.writeText(text);
        b.textContent = "Copied";
        setTimeout(() => (b.textContent = "Copy"), 1500);
      } catch {
        b.textContent = "Select and copy";
      }
    });
  }
  $("refresh").addEventListener("click", refresh);
  $("devnet-pay").addEventListener("click", devnetPay);
  $("overpaid-claim").addEventListener("click", claimOverpaid);
  document.addEventListener("checkout:refresh", () => schedule(300)); // wallet.js reported a transaction
  setInterval(tick, 1000);
  load();
})();
