// Pay a quote without gas (issue 24): for a quote the view offers `gasless` (a token that takes
// EIP-3009 authorizations, e.g. USDC), the customer signs an EIP-712 TransferWithAuthorization in
// the token's own domain with eth_signTypedData_v4 — from the connected account, to the deposit
// address, value = gasless.valueAsset (the quote's amount, plus the relay fee when the merchant
// passes the network fee on), validAfter 0, validBefore = gasless.validBefore (the quote's
// expiry), a random 32-byte nonce — and the page posts it (POST …/gasless-payments). The server
// checks it and its hot wallet submits it and pays the gas: no native token is needed. Who bears
// the network fee is shown before signing (note()). Nothing the page signs or posts is trusted:
// the server recovers the signer and checks every term against the quote.
import { bytesToHex, formatUnits, getTypesForEIP712Domain, serializeTypedData } from "viem";

const transferWithAuthorization = [
  { name: "from", type: "address" },
  { name: "to", type: "address" },
  { name: "value", type: "uint256" },
  { name: "validAfter", type: "uint256" },
  { name: "validBefore", type: "uint256" },
  { name: "nonce", type: "bytes32" },
];

const units = (q, v) => `${formatUnits(BigInt(v), q.tokenDecimals)} ${q.tokenSymbol}`;

// note says who pays the network fee of a payment without gas, before the customer signs.
export function note(view, q) {
  const g = q.gasless;
  if (!g) return "";
  if (g.feePaidBy === "buyer" && BigInt(g.feeAsset) > 0n) {
    return `Without gas: no ${nativeOf(view, q)} needed. A network fee of ${units(q, g.feeAsset)} is included: you sign ${units(q, g.valueAsset)} in all.`;
  }
  return `Without gas: no ${nativeOf(view, q)} needed. ${view.merchantDisplayName} pays the network fee; you sign exactly ${units(q, g.valueAsset)}.`;
}

function nativeOf(view, q) {
  const n = ((view && view.walletNetworks) || []).find((x) => x.evmChainId === q.evmChainId);
  return n ? n.nativeSymbol : "gas token";
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
  ctx.say(`Connecting to ${ctx.walletName(w)}…`);
  const accounts = await ctx.request(w, "eth_requestAccounts");
  const account = Array.isArray(accounts) ? accounts[0] : null;
  if (typeof account !== "string" || !/^0x[0-9a-fA-F]{40}$/.test(account)) {
    ctx.fail(`${ctx.walletName(w)} gave no account. Unlock it and try again.`);
    ctx.say("");
    return null;
  }
  // The domain names the chain: wallets sign typed data only for the chain they are on.
  if (!(await ctx.switchTo(w, q))) return null;
  const value = BigInt(g.valueAsset);
  const held = await ctx.balance(w, account, q);
  if (held !== null && held < value) {
    ctx.fail(`Your wallet holds ${units(q, held)} on ${q.chainName}; this payment needs ${units(q, value)}. Nothing was signed.`);
    ctx.say("");
    return null;
  }
  const nonce = bytesToHex(crypto.getRandomValues(new Uint8Array(32)));
  const { json, message } = typedData(q, account.toLowerCase(), nonce);
  ctx.say(`Sign the payment of ${units(q, value)} in ${ctx.walletName(w)} (a signature, not a transaction: no network fee for you)…`);
  const signature = await ctx.request(w, "eth_signTypedData_v4", [account, json]);
  if (typeof signature !== "string" || !/^0x[0-9a-fA-F]{130}$/.test(signature)) throw new Error("the wallet answered no signature");
  ctx.say("Signed. Sending your payment…");
  const res = await ctx.post("/gasless-payments", {
    quoteId: q.id, evmChainId: q.evmChainId, tokenAddress: q.contractAddress, from: message.from, to: message.to,
    value: g.valueAsset, validAfter: 0, validBefore: g.validBefore, nonce, signature,
  });
  const body = await res.json().catch(() => null);
  if (res.status === 202 && body) {
    ctx.say(`Payment signed from ${ctx.walletName(w)}. The network fee is paid for you; waiting for the network…`);
    return body;
  }
  const why = (body && body.error && body.error.message) || `the server answered ${res.status}`;
  ctx.fail(`The signed payment was not accepted: ${why}. Nothing was sent: pay again, or by the QR code and address below.`);
  ctx.say("");
  return null;
}

// failed says why a posted authorization did not pay (the view's gaslessPayment), once.
export function failed(gp) {
  const why = gp.failureReason ? ` (${gp.failureReason})` : "";
  return `The payment without gas did not go through${why}. Nothing was taken: pay again, or by the QR code and address below.`;
}
