// The checkout and refund claim pages' languages (issue 24). Every string the pages show is in one
// catalogue, checkout/page/i18n.json — an object of messages per language, English the reference
// — which checkout/page.go puts in front of this file when it serves it, as
// `const checkoutCatalogue = {…};` (a script from this origin: the CSP stays strict, and the
// messages are there before any other script runs). Loaded first; the other scripts call
// checkoutI18n.t and its formatters.
//
// The language: ?lang= in the page's URL when the catalogue has it (kept across the page's own
// navigation), else the first of the browser's languages (navigator.languages) the catalogue
// has, by language with any region or script (pt-BR → pt, zh-CN → zh). Traditional Chinese
// (zh-TW, zh-HK, zh-MO, zh-Hant) reads Simplified only when no other preferred language is here.
// Else English. A message missing from a language is English's.
//
// Numbers and times follow the locale through Intl; token amounts keep amounts.js's exact string
// arithmetic, and only their decimal and grouping separators follow the locale (no JS number
// ever holds money: the whole part is formatted as a BigInt, the fraction's digits are kept).
"use strict";

const checkoutI18n = (() => {
  /* global checkoutCatalogue: prepended by checkout/page.go from checkout/page/i18n.json */
  const catalogue = typeof checkoutCatalogue === "object" && checkoutCatalogue && checkoutCatalogue.en ? checkoutCatalogue : { en: {} };
  const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
  const en = catalogue.en;
  const codes = Object.keys(catalogue);

  // match finds the catalogue language of a BCP 47 tag: {code, tag (canonical), weak}, or null.
  function match(raw) {
    let tag;
    let loc;
    try {
      tag = Intl.getCanonicalLocales(String(raw).split(";")[0].trim())[0]; // an Accept-Language item's q= is not the tag
      loc = new Intl.Locale(tag);
    } catch {
      return null;
    }
    if (!tag || !codes.includes(loc.language)) return null;
    const weak = loc.language === "zh" && (loc.script === "Hant" || (!loc.script && ["TW", "HK", "MO"].includes(loc.region)));
    return { code: loc.language, tag, weak };
  }

  const asked = new URLSearchParams(location.search).get("lang");
  const override = asked ? match(asked) : null;
  // Chromium lists a bare "zh" after zh-TW (the language of the region's tag): a reader of
  // Traditional characters, still a weak match.
  let traditional = false;
  const browser = [...(navigator.languages || []), navigator.language]
    .filter(Boolean)
    .map(match)
    .filter(Boolean)
    .map((m) => {
      traditional = traditional || m.weak;
      return traditional && m.tag === "zh" ? { ...m, weak: true } : m;
    });
  const chosen = override || browser.find((m) => !m.weak) || browser[0] || { code: "en", tag: "en", weak: false };
  const lang = chosen.code;
  const messages = catalogue[lang];

  // The locale for Intl: the tag that chose the language (de-CH groups with ’), or the browser's
  // own tag of that language when ?lang= named only the language (pt with a pt-BR browser).
  // Simplified text is never dated in Traditional characters.
  let locale = chosen.weak ? lang : chosen.tag;
  if (override && !/-/.test(locale)) {
    const same = browser.find((m) => m.code === lang && !m.weak);
    if (same) locale = same.tag;
  }
  if (!Intl.NumberFormat.supportedLocalesOf([locale]).length) locale = lang;

  // t is the message key in the page's language (English's when that language lacks it), with
  // each {name} replaced by params[name]. The pages set it as text, never as markup.
  function t(key, params) {
    let s = has(messages, key) ? messages[key] : has(en, key) ? en[key] : key;
    if (params) s = s.replace(/\{([A-Za-z]+)\}/g, (m, k) => (has(params, k) ? String(params[k]) : m));
    return s;
  }

  const numbers = new Intl.NumberFormat(locale, { numberingSystem: "latn" });
  const dollars = new Intl.NumberFormat(locale, { style: "currency", currency: "USD", numberingSystem: "latn" });
  const decimalPoint = (numbers.formatToParts(0.5).find((p) => p.type === "decimal") || { value: "." }).value;
  const digits = /^([0-9]+)(?:\.([0-9]+))?$/;

  // amount writes a token amount in the smallest unit (a string of digits) in whole tokens for
  // the locale: checkoutAmounts.format's digits (exact, trailing zeros trimmed to two decimals),
  // the whole part grouped by Intl as a BigInt, the locale's decimal separator. "1234500000" at 6
  // decimals: 1,234.50 (en), 1.234,50 (de), 1 234,50 (fr). Anything else is shown as given.
  function amount(smallest, decimals) {
    const plain = checkoutAmounts.format(smallest, decimals);
    const m = digits.exec(plain);
    if (!m) return plain;
    return numbers.format(BigInt(m[1])) + (m[2] ? decimalPoint + m[2] : "");
  }

  // usd writes integer cents as US dollars for the locale ($18.50, 18,50 $, US$ 18,50): Intl
  // places the symbol and groups the dollars (a BigInt); the cents are the digits themselves.
  function usd(cents) {
    const m = digits.exec(checkoutAmounts.format(String(cents), 2));
    if (!m) return String(cents);
    return dollars
      .formatToParts(BigInt(m[1]))
      .map((p) => (p.type === "fraction" ? m[2] : p.value))
      .join("");
  }

  const number = (n) => numbers.format(n);
  const dateTime = (ms) => new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeStyle: "short", numberingSystem: "latn" }).format(ms);
  const clock = (ms) => new Intl.DateTimeFormat(locale, { timeStyle: "short", numberingSystem: "latn" }).format(ms);

  // href keeps ?lang= on a link to another of the pages (the overpayment's claim page): the
  // language the customer asked for stays with them. Without ?lang=, the link is as given.
  function href(url) {
    if (!override) return url;
    const u = new URL(url, location.href);
    u.searchParams.set("lang", override.tag);
    return u.origin === location.origin ? u.pathname + u.search + u.hash : url;
  }

  // translate sets the page's own texts: data-i18n (text), data-i18n-alt, data-i18n-aria-label.
  function translate(root) {
    for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
    for (const el of root.querySelectorAll("[data-i18n-alt]")) el.alt = t(el.dataset.i18nAlt);
    for (const el of root.querySelectorAll("[data-i18n-aria-label]")) el.setAttribute("aria-label", t(el.dataset.i18nAriaLabel));
  }

  // The language menu: each language in its own name; choosing one reloads the page with ?lang=
  // (the fragment, which holds the secret, stays).
  function menu() {
    const select = document.getElementById("language");
    if (!select) return;
    for (const code of codes) {
      const o = document.createElement("option");
      o.value = code;
      o.lang = code;
      o.textContent = catalogue[code]["language.name"] || code;
      o.selected = code === lang;
      select.append(o);
    }
    select.addEventListener("change", () => {
      const u = new URL(location.href);
      u.searchParams.set("lang", select.value);
      location.assign(u.href);
    });
  }

  document.documentElement.lang = lang;
  translate(document);
  menu();

  return Object.freeze({ lang, locale, languages: Object.freeze(codes.slice()), t, amount, usd, number, dateTime, clock, href });
})();
