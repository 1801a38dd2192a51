// The hosted refund claim page (/refund/{refundId}#<secret>). The claim secret is the URL
// fragment, which the browser never sends to the server; this script sends it in the
// X-Service-Refund-Secret header of the refund-claim API. The customer either connects the
// wallet that paid — found by EIP-6963 discovery, or window.ethereum (EIP-1193) as a fallback —
// and signs the refund's EIP-712 typed data (eth_signTypedData_v4) with their address as the
// recipient, or types another address, which the merchant's team then approves. No third-party
// code, no build step.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const refundId = document.body.dataset.refundId;
  const raw = location.hash.slice(1);
  // The claimUrl's fragment is the secret itself; "secret=…" (the checkout link's form) also works.
  const secret = raw.startsWith("secret=") ? new URLSearchParams(raw).get("secret") || "" : decodeURIComponent(raw);
  const api = `/v1/external/refund-claim-auth/refunds/${encodeURIComponent(refundId)}`;
  const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
  const ZERO = /^0x0{40}$/;

  let view = null;
  let pollTimer = 0;
  let account = "";
  let wallet = null; // {info, provider} of the connected wallet
  let busy = false;
  let claimedTyped = false; // this page claimed with a typed address: it waits for an approval

  const t = checkoutI18n.t; // the page's language (i18n.js)

  function fail(message) {
    $("error").textContent = message;
    $("error").hidden = !message;
  }

  // Whole tokens for people, as the checkout page writes them (amounts.js's digits, the locale's
  // separators: i18n.js), with the token's symbol.
  function units(smallest, decimals, symbol) {
    return t("common.tokenAmount", { amount: checkoutI18n.amount(smallest, decimals), symbol });
  }

  async function call(path, init) {
    const res = await fetch(api + path, {
      cache: "no-store",
      ...init,
      headers: { "X-Service-Refund-Secret": secret, ...(init && init.headers) },
    });
    if (res.status === 404 || res.status === 401) {
      stop();
      hideActions();
      $("status").textContent = "";
      fail(t("refund.linkInvalid"));
      return null;
    }
    if (res.status === 429) {
      const wait = Number(res.headers.get("Retry-After") || "2");
      fail(t("refund.tooMany", { seconds: checkoutI18n.number(wait) }));
      schedule(wait * 1000);
      return null;
    }
    return res;
  }

  async function errorOf(res) {
    const body = await res.json().catch(() => null);
    const e = body && body.error ? body.error : {};
    return { status: res.status, code: e.code || "", message: e.message || t("refund.serverAnswered", { status: res.status }) };
  }

  async function load() {
    if (!secret) {
      $("status").textContent = "";
      fail(t("refund.linkIncomplete"));
      return;
    }
    try {
      const res = await call("");
      $("offline").hidden = true;
      if (!res) return;
      if (!res.ok) {
        schedule(5000);
        return;
      }
      show(await res.json());
    } catch {
      $("offline").hidden = false;
      schedule(5000);
    }
  }

  function hideActions() {
    $("wallet-section").hidden = true;
    $("typed-section").hidden = true;
  }

  function show(v) {
    view = v;
    document.title = t("refund.docTitle", { merchant: v.merchantDisplayName });
    $("merchant").textContent = t("refund.from", { merchant: v.merchantDisplayName });
    $("amount").textContent = units(v.amountAsset, v.tokenDecimals, v.tokenSymbol);
    $("facts").hidden = false;
    $("chain").textContent = t("refund.chain", { chain: v.chainName, chainId: v.typedData.domain.chainId });
    $("token").textContent = v.tokenAddress
      ? t("refund.tokenContract", { symbol: v.tokenSymbol, address: v.tokenAddress })
      : t("refund.tokenNative", { symbol: v.tokenSymbol });
    const open = v.status === "awaiting_address";
    $("expires-label").hidden = $("expires").hidden = !open || !v.claimExpiresAt;
    if (v.claimExpiresAt) $("expires").textContent = checkoutI18n.dateTime(Date.parse(v.claimExpiresAt));
    $("recipient-label").hidden = $("recipient-row").hidden = !v.recipientAddress;
    $("recipient").textContent = v.recipientAddress || "";
    $("typed-help").textContent = t("refund.typedHint", { chain: v.chainName, symbol: v.tokenSymbol });
    $("status").textContent = statusText(v);
    $("status").className = `status ${v.status === "completed" ? "ok" : v.status === "failed" || v.status === "cancelled" ? "bad" : ""}`;
    $("wallet-section").hidden = !open;
    $("typed-section").hidden = !open;
    if (open) showWallets();
    schedule(v.status === "pending" || v.status === "processing" ? 5000 : 0);
  }

  function statusText(v) {
    switch (v.status) {
      case "awaiting_address":
        return t("refund.status.awaitingAddress");
      case "pending":
        return t(claimedTyped ? "refund.status.pendingTyped" : "refund.status.pending");
      case "processing":
        return t("refund.status.processing");
      case "completed":
        return t("refund.status.completed");
      case "failed":
        return t("refund.status.failed");
      case "cancelled":
        return t("refund.status.cancelled");
      default:
        return t("refund.status.other", { status: v.status });
    }
  }

  // The wallets are found by wallets.js (EIP-6963, or window.ethereum), loaded before this script.
  // Without it (a failed load) the page says no wallet was found and the typed address still works.
  /* global checkoutWallets */
  const found =
    typeof checkoutWallets === "undefined"
      ? { list: () => [], discoveryOver: () => true, onChange: () => {}, name: () => "", button: () => document.createElement("button") }
      : checkoutWallets;
  found.onChange(() => {
    if (view && view.status === "awaiting_address") showWallets();
  });

  let shownWallets = "";

  function showWallets() {
    const list = found.list();
    const key = list.map((w) => w.info.uuid).join(",") + (wallet ? "|" + wallet.info.uuid : "");
    $("no-wallet").hidden = list.length > 0 || !found.discoveryOver();
    if (key === shownWallets) return;
    shownWallets = key;
    const box = $("wallets");
    box.replaceChildren();
    for (const w of list) {
      const b = found.button(w, t("refund.connect", { wallet: found.name(w) }));
      b.addEventListener("click", () => connect(w));
      box.append(b);
    }
  }

  function rejected(err) {
    return err && (err.code === 4001 || err.code === "ACTION_REJECTED");
  }

  function walletError(err) {
    return (err && typeof err.message === "string" && err.message) || t("common.noReason");
  }

  async function connect(w) {
    if (busy) return;
    fail("");
    busy = true;
    try {
      const accounts = await w.provider.request({ method: "eth_requestAccounts" });
      if (!Array.isArray(accounts) || typeof accounts[0] !== "string" || !ADDRESS.test(accounts[0])) {
        fail(t("refund.noAddress"));
        return;
      }
      if (wallet && wallet.provider !== w.provider && typeof wallet.provider.removeListener === "function") {
        wallet.provider.removeListener("accountsChanged", onAccounts);
      }
      wallet = w;
      if (typeof w.provider.on === "function") w.provider.on("accountsChanged", onAccounts);
      setAccount(accounts[0]);
      showWallets();
    } catch (err) {
      fail(rejected(err) ? t("refund.connectDeclined") : t("refund.connectFailed", { reason: walletError(err) }));
    } finally {
      busy = false;
    }
  }

  function onAccounts(accounts) {
    if (Array.isArray(accounts) && typeof accounts[0] === "string" && ADDRESS.test(accounts[0])) setAccount(accounts[0]);
  }

  function isPayer(addr) {
    return view.payerAddresses.some((p) => p.toLowerCase() === addr.toLowerCase());
  }

  function setAccount(addr) {
    account = addr;
    $("connected").hidden = false;
    $("account").textContent = addr;
    const payer = isPayer(addr);
    $("not-payer").hidden = payer;
    $("not-payer").textContent = payer
      ? ""
      : t("refund.notPayer", { addresses: view.payerAddresses.join(", ") });
    $("sign").disabled = !payer;
  }

  // The wallet must be on the refund's chain: EIP-712 signers refuse a domain of another chain.
  async function onChain(provider, want) {
    const hex = "0x" + want.toString(16);
    let have = await provider.request({ method: "eth_chainId" });
    if (typeof have === "string" && parseInt(have, 16) === want) return true;
    try {
      await provider.request({ method: "wallet_switchEthereumChain", params: [{ chainId: hex }] });
      have = await provider.request({ method: "eth_chainId" });
      if (typeof have === "string" && parseInt(have, 16) === want) return true;
    } catch (err) {
      if (rejected(err)) {
        fail(t("refund.switchDeclined", { chain: view.chainName, chainId: want }));
        return false;
      }
    }
    const target = { chain: view.chainName, chainId: want };
    fail(typeof have === "string" ? t("refund.wrongNetworkOn", { ...target, current: parseInt(have, 16) }) : t("refund.wrongNetwork", target));
    return false;
  }

  function typedDataFor(recipient) {
    const td = JSON.parse(JSON.stringify(view.typedData));
    td.message.recipient = recipient;
    // eth_signTypedData_v4 hashes the domain with types.EIP712Domain: state it if the view did not.
    if (!td.types.EIP712Domain) {
      td.types.EIP712Domain = [
        { name: "name", type: "string" },
        { name: "version", type: "string" },
        { name: "chainId", type: "uint256" },
      ];
    }
    return td;
  }

  async function sign() {
    if (busy || !wallet || !account || !view) return;
    fail("");
    busy = true;
    $("sign").disabled = true;
    try {
      if (!(await onChain(wallet.provider, Number(view.typedData.domain.chainId)))) return;
      let signature;
      try {
        signature = await wallet.provider.request({ method: "eth_signTypedData_v4", params: [account, JSON.stringify(typedDataFor(account))] });
      } catch (err) {
        fail(rejected(err) ? t("refund.signDeclined") : t("refund.signFailed", { reason: walletError(err) }));
        return;
      }
      if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(signature)) {
        fail(t("refund.badSignature"));
        return;
      }
      await claim({ recipientAddress: account, signature });
    } catch {
      $("offline").hidden = false;
    } finally {
      busy = false;
      if (account) $("sign").disabled = !isPayer(account);
    }
  }

  async function claim(body) {
    const res = await call("/claim", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!res) return false;
    if (res.ok) {
      show(await res.json());
      $("status").focus();
      return true;
    }
    const e = await errorOf(res);
    if (e.code === "signature_invalid") {
      fail(t("refund.signatureInvalid"));
    } else if (e.code === "invalid_state") {
      fail(t("refund.invalidState"));
      load();
    } else if (e.code === "recipient_not_allowed" || e.code === "recipient_sanctioned" || res.status === 400) {
      fail(t("refund.recipientRefused", { reason: e.message }));
    } else {
      fail(t("refund.claimFailed", { reason: e.message }));
    }
    return false;
  }

  $("sign").addEventListener("click", sign);
  $("typed-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (busy || !view) return;
    const addr = $("typed-address").value.trim();
    if (!ADDRESS.test(addr) || ZERO.test(addr)) {
      fail(t("refund.addressFormat"));
      $("typed-address").setAttribute("aria-invalid", "true");
      $("typed-address").focus();
      return;
    }
    $("typed-address").removeAttribute("aria-invalid");
    fail("");
    busy = true;
    $("typed-submit").disabled = true;
    try {
      claimedTyped = true;
      if (!(await claim({ recipientAddress: addr }))) claimedTyped = false;
    } catch {
      claimedTyped = false;
      $("offline").hidden = false;
    } finally {
      busy = false;
      $("typed-submit").disabled = false;
    }
  });

  function schedule(ms) {
    clearTimeout(pollTimer);
    if (ms > 0) pollTimer = setTimeout(load, ms);
  }

  function stop() {
    clearTimeout(pollTimer);
  }

  $("status").tabIndex = -1;
  load();
})();
