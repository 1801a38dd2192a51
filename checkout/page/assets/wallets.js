"use strict";
// The browser wallets on this page, for both hosted pages (the checkout's wallet payment and the
// refund claim): found once, by EIP-6963 — every wallet announces itself (name, data: icon, an
// EIP-1193 provider) in answer to eip6963:requestProvider, several may — and, when none has
// announced itself within 600 ms, an older wallet that only sets window.ethereum. Loaded before
// the page's own script (deferred scripts run in order); the page asks list() when it renders and
// onChange() tells it when the list may have changed. Uses the page's catalogue (i18n.js) for a
// wallet that gives no name.
/* exported checkoutWallets */
/* global checkoutI18n */
const checkoutWallets = (() => {
  const announced = new Map(); // uuid → {info, provider}
  const listeners = [];
  let over = false;
  const changed = () => listeners.forEach((f) => f());

  window.addEventListener("eip6963:announceProvider", (e) => {
    const d = e.detail;
    if (!d || !d.info || !d.provider || typeof d.provider.request !== "function" || typeof d.info.uuid !== "string") return;
    announced.set(d.info.uuid, d);
    changed();
  });
  window.dispatchEvent(new Event("eip6963:requestProvider"));
  setTimeout(() => {
    over = true;
    changed();
  }, 600);

  // list is the wallets to offer: the announced ones, or the legacy window.ethereum once
  // discovery is over and none announced itself.
  function list() {
    const out = [...announced.values()];
    const legacy = window.ethereum;
    if (out.length === 0 && over && legacy && typeof legacy.request === "function") {
      const name = legacy.isMetaMask ? "MetaMask" : legacy.isCoinbaseWallet ? "Coinbase Wallet" : checkoutI18n.t("common.browserWallet");
      out.push({ info: { uuid: "window.ethereum", name, icon: "" }, provider: legacy });
    }
    return out;
  }

  const name = (w) => String(w.info.name || checkoutI18n.t("common.browserWallet")).slice(0, 60);

  // button is a wallet's button: its icon (data: images only — EIP-6963 icons are data URIs and
  // the CSP allows no other image host), then label, as text.
  function button(w, label) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "wallet";
    if (typeof w.info.icon === "string" && /^data:image\//.test(w.info.icon)) {
      const img = document.createElement("img");
      img.src = w.info.icon;
      img.alt = "";
      img.width = 24;
      img.height = 24;
      b.append(img);
    }
    b.append(label);
    return b;
  }

  return {
    list,
    name,
    button,
    onChange: (f) => listeners.push(f),
    discoveryOver: () => over,
  };
})();
