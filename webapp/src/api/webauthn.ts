// WebAuthn in the browser: the server sends the ceremony options in their JSON form (binary
// members base64url, WebAuthn Level 3) and wants the credential back in the same form. Not every
// browser has PublicKeyCredential.parse*OptionsFromJSON / toJSON yet, so the few binary members
// are converted here.
import type { Schemas } from "./client";

export function b64urlToBuffer(s: string): ArrayBuffer {
  const b64 = s.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(s.length / 4) * 4, "=");
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  return bytes.buffer;
}

export function bufferToB64url(b: ArrayBuffer | ArrayBufferView): string {
  const bytes = b instanceof ArrayBuffer ? new Uint8Array(b) : new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
  let bin = "";
  for (const x of bytes) bin += String.fromCharCode(x);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function withIds(list: unknown): unknown {
  if (!Array.isArray(list)) return list;
  return list.map((c: unknown) => (isObj(c) && typeof c["id"] === "string" ? { ...c, id: b64urlToBuffer(c["id"]) } : c));
}

export function passkeysSupported(): boolean {
  return typeof window.PublicKeyCredential === "function" && typeof navigator.credentials?.get === "function";
}

function credentialJSON(c: PublicKeyCredential): Json {
  const r = c.response;
  const response: Json = { clientDataJSON: bufferToB64url(r.clientDataJSON) };
  if ("attestationObject" in r) {
    const a = r as AuthenticatorAttestationResponse;
    response["attestationObject"] = bufferToB64url(a.attestationObject);
    if (typeof a.getTransports === "function") response["transports"] = a.getTransports();
  } else {
    const a = r as AuthenticatorAssertionResponse;
    response["authenticatorData"] = bufferToB64url(a.authenticatorData);
    response["signature"] = bufferToB64url(a.signature);
    if (a.userHandle) response["userHandle"] = bufferToB64url(a.userHandle);
  }
  return {
    id: c.id,
    rawId: bufferToB64url(c.rawId),
    type: c.type,
    response,
    clientExtensionResults: c.getClientExtensionResults(),
    ...(c.authenticatorAttachment ? { authenticatorAttachment: c.authenticatorAttachment } : {}),
  };
}

// getPasskey runs navigator.credentials.get with the begin step's options and answers the
// credential's JSON form for the finish step.
export async function getPasskey(opts: Schemas["PasskeyOptions"]): Promise<Json> {
  const pk = opts.publicKey;
  const challenge = pk["challenge"];
  if (typeof challenge !== "string") throw new Error("The server's passkey options lack a challenge.");
  const publicKey = { ...pk, challenge: b64urlToBuffer(challenge), allowCredentials: withIds(pk["allowCredentials"]) } as unknown as PublicKeyCredentialRequestOptions;
  if (publicKey.allowCredentials === undefined) delete (publicKey as unknown as Json)["allowCredentials"];
  const c = await navigator.credentials.get({ publicKey });
  if (!(c instanceof PublicKeyCredential)) throw new Error("No passkey was used.");
  return credentialJSON(c);
}

// createPasskey runs navigator.credentials.create with the registration options.
export async function createPasskey(opts: Schemas["PasskeyOptions"]): Promise<Json> {
  const pk = opts.publicKey;
  const challenge = pk["challenge"];
  const user = pk["user"];
  if (typeof challenge !== "string" || !isObj(user) || typeof user["id"] !== "string") {
    throw new Error("The server's passkey options are incomplete.");
  }
  const publicKey = {
    ...pk,
    challenge: b64urlToBuffer(challenge),
    user: { ...user, id: b64urlToBuffer(user["id"]) },
    excludeCredentials: withIds(pk["excludeCredentials"]) ?? [],
  } as unknown as PublicKeyCredentialCreationOptions;
  const c = await navigator.credentials.create({ publicKey });
  if (!(c instanceof PublicKeyCredential)) throw new Error("No passkey was made.");
  return credentialJSON(c);
}
