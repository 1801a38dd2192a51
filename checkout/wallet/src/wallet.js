// Pay from a browser wallet on the hosted checkout page (issue 24). Wallets are discovered by
// EIP-6963 (every announced provider, with its name and data: icon; a legacy window.ethereum
// when none announces). On the customer's click: connect (eth_requestAccounts), switch the wallet
// to the selected quote's chain (or add it, for a chain the view gives the parameters of), check
// the balance, and send exactly the quote with eth_sendTransaction: a native transfer of
// amountAsset, or an ERC-20 transfer(depositAddress, amountAsset) encoded by viem. The hash is then reported to the payment-secret API
// (POST …/transactions), which reads the transaction from the chain; nothing the page says is
// trusted. Money is BigInt throughout. checkout.js owns the page: it sends each view it shows as
// a "checkout:view" event and polls again on "checkout:refresh"; the QR path stays as it is.
//
// Bundled by esbuild (scripts/checkout-wallet.sh) into checkout/page/assets/wallet.js.
// viem encodes and decodes (ABI, hex quantities, units); the wallet is spoken to in plain EIP-1193
// requests (a viem client would bring every transaction-preparing action and a curve library
// along, none of which a browser wallet's eth_sendTransaction needs). Its messages are the
// page's catalogue's (checkoutI18n, i18n.js, loaded first), amounts written as the page writes
// them (the exact digits of amounts.js, the locale's separators).
import { decodeFunctionResult, encodeFunctionData, hexToBigInt, numberToHex } from "viem";
import { failed, note, payWithoutGas } from "./gasless.js";

/* global checkoutI18n, checkoutWallets */
const t = (key, params) => checkoutI18n.t(key, params);
const units = (amount, q) => t("common.tokenAmount", { amount: checkoutI18n.amount(amount.toString(), q.tokenDecimals), symbol: q.tokenSymbol });

// The two ERC-20 functions the page calls (JSON ABI: no parser in the bundle).
const erc20 = [
  { type: "function", name: "transfer", stateMutability: "nonpayable", inputs: [{ name: "to", type: "address" }, { name: "amount", type: "uint256" }], outputs: [{ type: "bool" }] },
  { type: "function", name: "balanceOf", stateMutability: "view", inputs: [{ name: "owner", type: "address" }], outputs: [{ type: "uint256" }] },
];

const $ = (id) => document.getElementById(id);
const paymentId = document.body.dataset.paymentId;
const secret = new URLSearchParams(location.hash.slice(1)).get("secret") || "";
const api = `/v1/external/payment-secret-auth/payments/${encodeURIComponent(paymentId)}`;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

let view = null;
let busy = false;
let shown = "";
let sent = null; // {hash, quoteId} once a transaction left the wallet; {gasless: id, quoteId} once a signed one was accepted

// The wallets are found by wallets.js (EIP-6963, or window.ethereum), loaded before this bundle.
checkoutWallets.onChange(render);

document.addEventListener("checkout:view", (e) => {
  view = e.detail;
  followGasless();
  render();
});

// inFlight says the view's newest signed payment is accepted or being relayed: the server takes
// no second one for the payment (409 gasless_in_progress), and one is relayed at a time.
function inFlight(v) {
  const gp = v && v.gaslessPayment;
  return !!gp && (gp.status === "accepted" || gp.status === "submitted");
}

// followGasless watches the signed payment the server accepted: a failed one lets the customer
// pay again (nothing was taken). One posted before a reload is followed the same way, so the
// wallet buttons stay hidden until it failed: a second signature is never asked for meanwhile.
function followGasless() {
  const gp = view && view.gaslessPayment;
  if (!sent && inFlight(view)) {
    sent = { gasless: gp.id, quoteId: gp.quoteId };
    if (gp.status === "accepted") say(t("gasless.waiting"));
  }
  if (!sent || !sent.gasless || !gp || gp.id !== sent.gasless) return;
  if (gp.status === "failed") {
    fail(failed(gp));
    say("");
    sent = null;
  } else if (gp.status === "submitted" || gp.status === "relayed") {
    say(t("gasless.onItsWay"));
  }
}

function selectedQuote(v) {
  return (v && v.selectedQuoteId && v.quotes.find((q) => q.id === v.selectedQuoteId)) || null;
}

// A quote is paid from a wallet while the payment waits for it and nothing arrived yet (a
// partly paid payment shows what is left by the address and amount, as the QR path does).
function payable(v, q) {
  return !!q && v.type === "payment" && v.status === "pending" && !v.received && q.status === "active" &&
    ADDRESS.test(q.depositAddress) && /^[1-9][0-9]*$/.test(q.amountAsset) &&
    (q.assetType === "native" || (q.assetType === "erc20" && ADDRESS.test(q.contractAddress || "")));
}

function render() {
  const box = $("wallet-pay");
  if (!box) return;
  const q = selectedQuote(view);
  const list = checkoutWallets.list();
  const open = view && payable(view, q) && list.length > 0 && !sent;
  const key = open ? `${q.id}|${!!q.gasless}|${list.map((w) => w.info.uuid).join(",")}` : "";
  box.hidden = !open;
  if (key === shown) return;
  shown = key;
  const buttons = $("wallet-buttons");
  buttons.replaceChildren();
  if (!open) return;
  for (const w of list) {
    const b = checkoutWallets.button(w, t("wallet.payWith", { wallet: walletName(w) }));
    b.addEventListener("click", () => pay(w));
    buttons.append(b);
    if (q.gasless) {
      const g = b.cloneNode(true);
      g.lastChild.textContent = t("gasless.payWith", { wallet: walletName(w) });
      g.addEventListener("click", () => pay(w, true));
      buttons.append(g);
    }
  }
  if (q.gasless) {
    const n = document.createElement("p");
    n.className = "wallet-status";
    n.id = "wallet-gasless-note";
    n.textContent = note(view, q);
    buttons.append(n);
  }
}

const walletName = checkoutWallets.name;

function say(text) {
  $("wallet-status").textContent = text;
}

function fail(text) {
  const el = $("wallet-error");
  el.textContent = text;
  el.hidden = !text;
}

function setBusy(on) {
  busy = on;
  for (const b of document.querySelectorAll("#wallet-buttons button")) b.disabled = on;
}

// network is what wallet_addEthereumChain (EIP-3085) needs for the quote's chain, from the view's
// walletNetworks (the devnets this deployment hands out an RPC URL for); null for any other chain:
// wallets know the public ones themselves.
function network(q) {
  const n = ((view && view.walletNetworks) || []).find((x) => x.evmChainId === q.evmChainId);
  if (!n || !n.rpcUrls.length) return null;
  const params = {
    chainId: numberToHex(q.evmChainId),
    chainName: n.chainName,
    nativeCurrency: { name: n.nativeSymbol, symbol: n.nativeSymbol, decimals: n.nativeDecimals },
    rpcUrls: n.rpcUrls,
  };
  if (n.blockExplorerUrl) params.blockExplorerUrls = [n.blockExplorerUrl];
  return params;
}

const request = (w, method, params) => w.provider.request(params ? { method, params } : { method });
const chainIdOf = async (w) => Number(hexToBigInt(await request(w, "eth_chainId")));

// codeOf finds the EIP-1193 / JSON-RPC error code in an error or its causes.
function codeOf(err) {
  for (let e = err, i = 0; e && i < 8; e = e.cause, i++) {
    if (typeof e.code === "number") return e.code;
  }
  return undefined;
}

function reasonOf(err) {
  return String((err && (err.shortMessage || err.message)) || t("common.noReason")).slice(0, 200);
}

const declined = (w) => t("wallet.declined", { wallet: walletName(w) });

async function pay(w, gasless) {
  if (busy || !view) return;
  const q = selectedQuote(view);
  if (!payable(view, q) || (gasless && !q.gasless)) return;
  fail("");
  setBusy(true);
  try {
    if (gasless) {
      const accepted = await payWithoutGas(gaslessContext, w, q);
      if (accepted) {
        sent = { gasless: accepted.id, quoteId: q.id };
        render();
        refresh();
      }
    } else await send(w, q);
  } catch (err) {
    const code = codeOf(err);
    if (code === 4001) fail(declined(w));
    else if (/insufficient funds/i.test(reasonOf(err))) {
      fail(t("wallet.insufficientFunds", { chain: q.chainName }));
    } else fail(t("wallet.sendFailed", { wallet: walletName(w), reason: reasonOf(err) }));
    say("");
  } finally {
    setBusy(false);
  }
}

async function send(w, q) {
  say(t("wallet.connecting", { wallet: walletName(w) }));
  const accounts = await request(w, "eth_requestAccounts");
  const account = Array.isArray(accounts) ? accounts[0] : null;
  if (typeof account !== "string" || !ADDRESS.test(account)) {
    fail(t("wallet.noAccount", { wallet: walletName(w) }));
    say("");
    return;
  }
  if ((await chainIdOf(w)) !== q.evmChainId) {
    say(t("wallet.switching", { wallet: walletName(w), chain: q.chainName }));
    if (!(await switchTo(w, q))) return;
  }
  const amount = BigInt(q.amountAsset);
  const due = units(amount, q);
  const held = await balance(w, account, q);
  if (held !== null && held < amount) {
    fail(t("wallet.notEnough", { held: units(held, q), chain: q.chainName, due }));
    say("");
    return;
  }
  if ((await chainIdOf(w)) !== q.evmChainId) { // switched away meanwhile: never send on another chain
    fail(t("wallet.movedAway", { wallet: walletName(w), chain: q.chainName, chainId: q.evmChainId }));
    say("");
    return;
  }
  say(t("wallet.confirm", { amount: due, wallet: walletName(w) }));
  const tx =
    q.assetType === "native"
      ? { from: account, to: q.depositAddress, value: numberToHex(amount) }
      : { from: account, to: q.contractAddress, value: "0x0",
          data: encodeFunctionData({ abi: erc20, functionName: "transfer", args: [q.depositAddress, amount] }) };
  const hash = await request(w, "eth_sendTransaction", [{ ...tx, chainId: numberToHex(q.evmChainId) }]);
  if (typeof hash !== "string" || !/^0x[0-9a-fA-F]{64}$/.test(hash)) throw new Error(t("wallet.noHash"));
  sent = { hash, quoteId: q.id };
  render();
  say(t("wallet.sent", { wallet: walletName(w), hash: hash.slice(0, 10) }));
  report(0);
}

// switchTo moves the wallet to the quote's chain, adding the chain first when the wallet does
// not know it (4902) and the view says how (EIP-3085). It says why when it cannot.
async function switchTo(w, q) {
  const chainId = numberToHex(q.evmChainId);
  try {
    await request(w, "wallet_switchEthereumChain", [{ chainId }]);
  } catch (err) {
    const code = codeOf(err);
    const add = network(q);
    if (code === 4001) {
      fail(t("wallet.switchDeclined", { wallet: walletName(w), chain: q.chainName, chainId: q.evmChainId }));
      say("");
      return false;
    }
    if (code !== 4902 || !add) {
      fail(t("wallet.switchFailed", { wallet: walletName(w), chain: q.chainName, chainId: q.evmChainId }));
      say("");
      return false;
    }
    say(t("wallet.adding", { wallet: walletName(w), chain: q.chainName }));
    await request(w, "wallet_addEthereumChain", [add]); // a 4001 here is the caller's "declined"
    if ((await chainIdOf(w)) !== q.evmChainId) await request(w, "wallet_switchEthereumChain", [{ chainId }]);
  }
  if ((await chainIdOf(w)) !== q.evmChainId) {
    fail(t("wallet.stillElsewhere", { wallet: walletName(w), chain: q.chainName, chainId: q.evmChainId }));
    say("");
    return false;
  }
  return true;
}

// balance is what the account holds of the quote's token, asked through the wallet; null when the
// wallet cannot say (the payment is then left to the wallet's own check).
async function balance(w, account, q) {
  try {
    if (q.assetType === "native") return hexToBigInt(await request(w, "eth_getBalance", [account, "latest"]));
    const data = await request(w, "eth_call", [{ to: q.contractAddress, data: encodeFunctionData({ abi: erc20, functionName: "balanceOf", args: [account] }) }, "latest"]);
    return decodeFunctionResult({ abi: erc20, functionName: "balanceOf", data });
  } catch {
    return null;
  }
}

// gaslessContext is what payWithoutGas uses of this page.
const gaslessContext = {
  request, say, fail, walletName, balance,
  switchTo: async (w, q) => (await chainIdOf(w)) === q.evmChainId || switchTo(w, q),
  post: (path, body) => fetch(`${api}${path}`, {
    method: "POST",
    cache: "no-store",
    headers: { "X-Service-Payment-Secret": secret, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }),
};

// report tells the server the transaction's hash, again every few seconds while it is not mined
// (202), up to about two minutes; the watcher records it in any case.
async function report(attempt) {
  if (!sent) return;
  let wait = 3000;
  try {
    const res = await fetch(`${api}/transactions`, {
      method: "POST",
      cache: "no-store",
      headers: { "X-Service-Payment-Secret": secret, "Content-Type": "application/json" },
      body: JSON.stringify({ quoteId: sent.quoteId, txHash: sent.hash }),
    });
    const body = await res.json().catch(() => null);
    if (res.status === 200 && body) {
      if (body.status === "recorded") say(t("wallet.recorded"));
      else if (body.status === "reverted") {
        fail(t("wallet.reverted"));
        say("");
        sent = null;
        render();
      } else {
        fail(t("wallet.paidNothing"));
        say("");
        sent = null;
        render();
      }
      refresh();
      return;
    }
    if (res.status === 429) wait = 1000 * Number(res.headers.get("Retry-After") || "3");
    else if (res.status !== 202) {
      refresh(); // the payment moved on (409) or the link is wrong: the page's own poll says so
      return;
    }
  } catch {
    // offline for a moment: try again
  }
  refresh();
  if (attempt < 40) setTimeout(() => report(attempt + 1), wait);
}

function refresh() {
  document.dispatchEvent(new Event("checkout:refresh"));
}
