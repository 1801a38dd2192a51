// Token amounts for people: an amount in the token's smallest unit ("6167000000000000", 18
// decimals) written in whole tokens ("0.006167"). Only how the page shows an amount: the API's
// amountAsset and the EIP-681 URI (QR code, wallet link) keep the exact smallest-unit integer.
// String arithmetic on the digits, never a JS number: a double holds 15–17 significant digits,
// and an 18-decimal amount needs more (a rounded figure would ask the customer for the wrong sum).
// Loaded before checkout.js and refund.js, which call checkoutAmounts.format.
"use strict";

const checkoutAmounts = (() => {
  // At least two decimals, as a price is written ("18.50 USDC", not "18.5 USDC"), never more
  // than the token has. Every token gets the same rule: the page is not told which tokens are
  // pegged to a currency, and "20.10 POL" reads as well as "20.1 POL".
  const minDecimals = 2;

  // format writes smallest (a string of digits) with decimals places as whole tokens: trailing
  // zeros trimmed down to minDecimals, leading zeros of the whole part dropped, no exponent, no
  // grouping. Anything that is not a whole number of units is shown as given, never guessed at.
  function format(smallest, decimals) {
    const digits = String(smallest);
    if (!/^[0-9]+$/.test(digits) || !Number.isInteger(decimals) || decimals < 0) return digits;
    const padded = digits.padStart(decimals + 1, "0");
    const whole = padded.slice(0, padded.length - decimals).replace(/^0+(?=[0-9])/, "");
    const frac = padded
      .slice(padded.length - decimals)
      .replace(/0+$/, "")
      .padEnd(Math.min(minDecimals, decimals), "0");
    return frac ? `${whole}.${frac}` : whole;
  }

  return Object.freeze({ format });
})();
