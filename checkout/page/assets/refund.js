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
  const wallets = new Map(); // EIP-6963 announcements by uuid

  const dateFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

  function fail(message) {
    $("error").textContent = message;
    $("error").hidden = !message;
  }

  // Whole tokens for people, as the checkout page writes them (amounts.js).
  function units(smallest, decimals) {
    return checkoutAmounts.format(smallest, decimals);
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
      fail("This refund link is not valid. Check that you opened the complete link the merchant sent you.");
      return null;
    }
    if (res.status === 429) {
      const wait = Number(res.headers.get("Retry-After") || "2");
      fail(`Too many attempts: trying again in ${wait} s.`);
      schedule(wait * 1000);
      return null;
    }
    return res;
  }

  async function errorOf(res) {
    const body = await res.json().catch(() => null);
    const e = body && body.error ? body.error : {};
    return { status: res.status, code: e.code || "", message: e.message || `The server answered ${res.status}.` };
  }

  async function load() {
    if (!secret) {
      $("status").textContent = "";
      fail("This refund link is incomplete: its secret is missing. Open the complete link the merchant sent you.");
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
    document.title = `Your refund from ${v.merchantDisplayName}`;
    $("merchant").textContent = `From ${v.merchantDisplayName}`;
    $("amount").textContent = `${units(v.amountAsset, v.tokenDecimals)} ${v.tokenSymbol}`;
    $("facts").hidden = false;
    $("chain").textContent = `${v.chainName} (chain id ${v.typedData.domain.chainId})`;
    $("token").textContent = v.tokenAddress ? `${v.tokenSymbol} (contract ${v.tokenAddress})` : `${v.tokenSymbol} (the network's own coin)`;
    const open = v.status === "awaiting_address";
    $("expires-label").hidden = $("expires").hidden = !open || !v.claimExpiresAt;
    if (v.claimExpiresAt) $("expires").textContent = dateFmt.format(Date.parse(v.claimExpiresAt));
    $("recipient-label").hidden = $("recipient-row").hidden = !v.recipientAddress;
    $("recipient").textContent = v.recipientAddress || "";
    $("typed-help").textContent = `An address of yours on ${v.chainName} that can receive ${v.tokenSymbol} — not an exchange's deposit address, which may not credit a refund.`;
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
        return "Choose where to receive it.";
      case "pending":
        if (claimedTyped) return "Thank you. The merchant's team checks this address and approves the refund; it is sent to it then.";
        return "Claimed. The refund is on its way (an address typed here waits for the merchant's approval first).";
      case "processing":
        return "Claimed. The refund is being sent.";
      case "completed":
        return "Sent. The refund has reached the address below.";
      case "failed":
        return "The refund could not be sent. Please contact the merchant.";
      case "cancelled":
        return "This refund was cancelled, or its claim period ended. Please contact the merchant.";
      default:
        return `This refund is ${v.status}.`;
    }
  }

  // EIP-6963: wallets announce themselves in answer to eip6963:requestProvider (several may).
  window.addEventListener("eip6963:announceProvider", (e) => {
    const d = e.detail;
    if (!d || !d.info || !d.provider || typeof d.provider.request !== "function" || typeof d.info.uuid !== "string") return;
    wallets.set(d.info.uuid, d);
    if (view && view.status === "awaiting_address") showWallets();
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  let discoveryOver = false;
  setTimeout(() => {
    discoveryOver = true;
    if (view && view.status === "awaiting_address") showWallets();
  }, 600);

  function walletList() {
    const list = [...wallets.values()];
    // An older wallet that only injects window.ethereum (EIP-1193), when none announced itself.
    if (list.length === 0 && discoveryOver && window.ethereum && typeof window.ethereum.request === "function") {
      list.push({ info: { uuid: "window.ethereum", name: "browser wallet", icon: "" }, provider: window.ethereum });
    }
    return list;
  }

  let shownWallets = "";

  function showWallets() {
    const list = walletList();
    const key = list.map((w) => w.info.uuid).join(",") + (wallet ? "|" + wallet.info.uuid : "");
    $("no-wallet").hidden = list.length > 0 || !discoveryOver;
    if (key === shownWallets) return;
    shownWallets = key;
    const box = $("wallets");
    box.replaceChildren();
    for (const w of list) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "wallet";
      // data: images only (EIP-6963 icons are data URIs; the CSP allows nothing else).
      if (typeof w.info.icon === "string" && /^data:image\//.test(w.info.icon)) {
        const img = document.createElement("img");
        img.src = w.info.icon;
        img.alt = "";
        img.width = 24;
        img.height = 24;
        b.append(img);
      }
      b.append(`Connect ${String(w.info.name || "wallet").slice(0, 60)}`);
      b.addEventListener("click", () => connect(w));
      box.append(b);
    }
  }

  function rejected(err) {
    return err && (err.code === 4001 || err.code === "ACTION_REJECTED");
  }

  function walletError(err) {
    return (err && typeof err.message === "string" && err.message) || "no reason given";
  }

  async function connect(w) {
    if (busy) return;
    fail("");
    busy = true;
    try {
      const accounts = await w.provider.request({ method: "eth_requestAccounts" });
      if (!Array.isArray(accounts) || typeof accounts[0] !== "string" || !ADDRESS.test(accounts[0])) {
        fail("The wallet gave no address. Unlock it and try again.");
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
      fail(rejected(err) ? "You declined the connection in your wallet. Nothing was shared." : `The wallet could not connect: ${walletError(err)}.`);
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
      : `This wallet address did not pay this payment, so its signature is not accepted. Switch your wallet to the account that paid (${view.payerAddresses.join(", ")}), or type an address below.`;
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
        fail(`You declined switching networks. Your wallet is on another network: switch it to ${view.chainName} (chain id ${want}) and try again.`);
        return false;
      }
    }
    const other = typeof have === "string" ? ` (it is on chain id ${parseInt(have, 16)})` : "";
    fail(`Your wallet is on the wrong network${other}. Switch it to ${view.chainName} (chain id ${want}) and try again.`);
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
        fail(rejected(err) ? "You declined the signature in your wallet. Nothing was claimed; you can try again." : `Your wallet could not sign: ${walletError(err)}.`);
        return;
      }
      if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(signature)) {
        fail("Your wallet returned a signature this page cannot use (expected 65 bytes). Try another wallet, or type your address below.");
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
      fail("The signature is not from an address that paid this payment. Connect the wallet that paid, or type an address below.");
    } else if (e.code === "invalid_state") {
      fail("This refund is no longer waiting for an address: it was claimed already, cancelled, or its claim period ended.");
      load();
    } else if (e.code === "recipient_not_allowed" || e.code === "recipient_sanctioned" || res.status === 400) {
      fail(`This address cannot receive the refund: ${e.message}`);
    } else {
      fail(`The claim did not go through: ${e.message}`);
    }
    return false;
  }

  $("sign").addEventListener("click", sign);
  $("typed-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    if (busy || !view) return;
    const addr = $("typed-address").value.trim();
    if (!ADDRESS.test(addr) || ZERO.test(addr)) {
      fail("Enter the address as 0x followed by 40 hexadecimal characters.");
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
