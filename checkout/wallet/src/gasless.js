// Pay a quote without gas (issue 24): for a quote the view offers `gasless` (a token that takes
// EIP-3009 authorizations, e.g. USDC), the customer signs an EIP-712 TransferWithAuthorization in
// the token's own domain with eth_signTypedData_v4 — from the connected account, to the deposit
// address, value = gasless.valueAsset (the quote's amount, plus the relay fee when the merchant
// passes the network fee on), validAfter 0, validBefore = gasless.validBefore (the quote's
// expiry), a random 32-byte nonce — and the page posts it (POST …/gasless-payments). The server
// checks it and its hot wallet submits it and pays the gas: no native token is needed. Who bears
// the network fee is shown before signing (note()). Nothing the page signs or posts is trusted:
// the server recovers the signer and checks every term against the quote.
// Its messages are the page's catalogue's (checkoutI18n, i18n.js), amounts written as the page
// writes them.
import { bytesToHex, getTypesForEIP712Domain, serializeTypedData } from "viem";

/* global checkoutI18n */
const t = (key, params) => checkoutI18n.t(key, params);

const transferWithAuthorization = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
];

const units = (q, v) => t("common.tokenAmount", { amount: checkoutI18n.amount(BigInt(v).toString(), q.tokenDecimals), symbol: q.tokenSymbol });

// note says who pays the network fee of a payment without gas, before the customer signs.
export function note(view, q) {
  const g = q.gasless;
  if (!g) return "";
  if (g.feePaidBy === "buyer" && BigInt(g.feeAsset) > 0n) {
    return t("gasless.noteBuyer", { native: nativeOf(view, q), fee: units(q, g.feeAsset), total: units(q, g.valueAsset) });
  }
  return t("gasless.noteMerchant", { native: nativeOf(view, q), merchant: view.merchantDisplayName, total: units(q, g.valueAsset) });
}

function nativeOf(view, q) {
  const n = ((view && view.walletNetworks) || []).find((x) => x.evmChainId === q.evmChainId);
  return n ? n.nativeSymbol : t("gasless.gasToken");
}

// typedData is the authorization as eth_signTypedData_v4 takes it (JSON; uint256 as decimal).
export function typedData(q, from, nonce) {
  const g = q.gasless;
  const domain = { name: g.domainName, version: g.domainVersion, chainId: BigInt(q.evmChainId), verifyingContract: q.contractAddress };
  const message = { from, to: q.depositAddress, value: BigInt(g.valueAsset), validAfter: 0n, validBefore: BigInt(g.validBefore), nonce };
  const types = { EIP712Domain: getTypesForEIP712Domain({ domain }), TransferWithAuthorization: transferWithAuthorization };
  return { json: serializeTypedData({ domain, message, primaryType: "TransferWithAuthorization", types }), message };
}

// payWithoutGas signs and posts the authorization; ctx is wallet.js's: {request, switchTo,
// balance, say, fail, walletName, post}. It returns the accepted GaslessPayment, or null when it
// stopped with a message.
export async function payWithoutGas(ctx, w, q) {
  const g = q.gasless;
  ctx.say(t("wallet.connecting", { wallet: ctx.walletName(w) }));
  const accounts = await ctx.request(w, "eth_requestAccounts");
  const account = Array.isArray(accounts) ? accounts[0] : null;
  if (typeof account !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(account)) {
    ctx.fail(t("wallet.noAccount", { wallet: ctx.walletName(w) }));
    ctx.say("");
    return null;
  }
  // The domain names the chain: wallets sign typed data only for the chain they are on.
  if (!(await ctx.switchTo(w, q))) return null;
  const value = BigInt(g.valueAsset);
  const held = await ctx.balance(w, account, q);
  if (held !== null && held < value) {
    ctx.fail(t("gasless.notEnough", { held: units(q, held), chain: q.chainName, due: units(q, value) }));
    ctx.say("");
    return null;
  }
  const nonce = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  const { json, message } = typedData(q, account.toLowerCase(), nonce);
  ctx.say(t("gasless.sign", { amount: units(q, value), wallet: ctx.walletName(w) }));
  const signature = await ctx.request(w, "eth_signTypedData_v4", [account, json]);
  if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new Error(t("gasless.noSignature"));
  ctx.say(t("gasless.signed"));
  const res = await ctx.post("/gasless-payments", {
    quoteId: q.id, evmChainId: q.evmChainId, tokenAddress: q.contractAddress, from: message.from, to: message.to,
    value: g.valueAsset, validAfter: 0, validBefore: g.validBefore, nonce, signature,
  });
  const body = await res.json().catch(() => null);
  if (res.status === 202 && body) {
    ctx.say(t("gasless.accepted", { wallet: ctx.walletName(w) }));
    return body;
  }
  const why = (body && body.error && body.error.message) || t("common.serverAnswered", { status: res.status });
  ctx.fail(t("gasless.refused", { reason: why }));
  ctx.say("");
  return null;
}

// failed says why a posted authorization did not pay (the view's gaslessPayment), once.
export function failed(gp) {
  return gp.failureReason ? t("gasless.failedBecause", { reason: gp.failureReason }) : t("gasless.failed");
}
