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
  const t = checkoutI18n.t; // the page's language (i18n.js)

  function fail(message) {
    $("error").textContent = message;
    $("error").hidden = false;
  }

  async function call(path, init) {
    const res = await fetch(api + path, { cache: "no-store", ...init, headers: { ...headers, ...(init && init.headers) } });
    if (res.status === 404 || res.status === 401) {
      stop();
      fail(t("checkout.linkInvalid"));
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
      fail(t("checkout.linkIncomplete"));
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
    document.title = t("checkout.docTitle", { merchant: shown });
    applyAccent(v.accentColor);
    if (v.merchantLogoUrl && /^https:\/\//.test(v.merchantLogoUrl)) {
      $("logo").src = v.merchantLogoUrl;
      $("logo").hidden = false;
    }
    $("amount").textContent = v.amountInCents != null ? checkoutI18n.usd(v.amountInCents) : t("checkout.anyAmount");
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
    const text = t("checkout.overpaidText", { amount: units(o.excessAmountAsset, o.tokenDecimals, o.tokenSymbol), merchant: v.merchantDisplayName || v.merchantName });
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
        const reason = (body && body.error && body.error.message) || t("common.serverAnswered", { status: res.status });
        fail(t(res.status === 409 ? "checkout.overpaidRefused" : "common.wentWrong", { reason }));
        return;
      }
      let hash = "";
      try {
        hash = new URL(body.claimUrl).hash;
      } catch {
        hash = "";
      }
      location.assign(checkoutI18n.href(`/refund/${encodeURIComponent(body.refundId)}${hash}`));
    } catch {
      fail(t("checkout.overpaidOffline"));
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
        text = t("status.pending");
        break;
      case "processing":
        if (r && r.dueAsset !== "0" && q) {
          text = t("status.underpaid", { amount: units(r.dueAsset, q.tokenDecimals, q.tokenSymbol) });
          tone = "warn";
        } else if (v.confirmations) {
          const n = checkoutI18n.number;
          text = t("status.confirmingOf", { seen: n(v.confirmations.seen), required: n(v.confirmations.required) });
        } else {
          text = t("status.confirming");
        }
        break;
      case "completed": {
        const more = r && q && BigInt(r.amountAsset) > BigInt(q.amountAsset);
        const back = v.redirectUrl && !offered(v);
        text = t(more ? (back ? "status.paidMoreReturning" : "status.paidMore") : back ? "status.paidReturning" : "status.paid");
        tone = "ok";
        break;
      }
      case "expired":
        text = t("status.expired");
        tone = "bad";
        break;
      case "failed":
        text = t("status.failed");
        tone = "bad";
        break;
      case "cancelled":
        text = t("status.cancelled");
        tone = "bad";
        break;
      default:
        text = t("status.other", { status: v.status });
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
        amount.textContent = v.type === "deposit" ? t("checkout.anyAmountShort") : units(q.amountAsset, q.tokenDecimals, q.tokenSymbol);
        if (q.status !== "active") {
          label.className = "expired";
          amount.textContent = t("checkout.quoteExpiredLabel", { amount: amount.textContent });
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
    const due = r && r.quoteId === q.id && r.dueAsset !== "0" ? r.dueAsset : "";
    $("pay-title").textContent = t(due ? "checkout.sendRest" : v.type === "deposit" ? "checkout.sendAny" : "checkout.sendExactly");
    const shown = due || (v.type === "deposit" ? "" : q.amountAsset);
    $("amount-asset").textContent = shown ? units(shown, q.tokenDecimals, q.tokenSymbol) : t("checkout.anyAmountOf", { symbol: q.tokenSymbol });
    // Copied as wallets read a figure: a decimal point, no grouping (18.50), whatever the language.
    $("amount-asset").dataset.value = shown ? checkoutAmounts.format(shown, q.tokenDecimals) : "";
    // The QR code and the wallet link ask for the full amount: not shown when only the rest is due.
    $("qr").parentElement.hidden = $("wallet").parentElement.hidden = Boolean(due);
    $("address").textContent = q.depositAddress;
    $("contract").textContent = q.contractAddress || "";
    $("contract-row").hidden = $("contract-label").hidden = !q.contractAddress;
    $("warning").textContent = t("checkout.warning", { symbol: q.tokenSymbol, chain: q.chainName, chainId: q.evmChainId });
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
    const remaining = `${m}:${String(s).padStart(2, "0")}`;
    $("countdown").textContent = expired ? t("checkout.quoteExpired") : t("checkout.validFor", { time: remaining, until: checkoutI18n.clock(Date.parse(q.expiresAt) - skewMs) });
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
      fail(t("checkout.quoteGone"));
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
      fail(t("checkout.noNewQuotes"));
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
        fail(t("checkout.devnetFailed", { reason: (body && body.error && body.error.message) || res.status }));
      }
    } catch {
      fail(t("checkout.devnetUnreachable"));
    } finally {
      $("devnet-pay").disabled = false;
    }
    schedule(500);
  }

  // Whole tokens for people, with the token's symbol (amounts.js's digits, the locale's
  // separators: i18n.js); the API's figures and the URI stay exact.
  function units(smallest, decimals, symbol) {
    return t("common.tokenAmount", { amount: checkoutI18n.amount(smallest, decimals), symbol });
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
        b.textContent = t("common.copied");
        setTimeout(() => (b.textContent = t("common.copy")), 1500);
      } catch {
        b.textContent = t("common.selectAndCopy");
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
