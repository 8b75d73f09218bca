// A JWT test kit for HANDOFF_AUTH=jwt: signing keys for every algorithm the
// verifier accepts, their JWKS served over loopback HTTP, and the tokens that
// must be refused. node:crypto and node:http only, so what it signs does not
// depend on the JOSE library a verifier might share a bug with.
//
// * makeKey(alg, kid): RS256 (RSA 2048), ES256 (P-256) or EdDSA (Ed25519) pair;
//   `jwk` is the public half as published (kid, alg, use:"sig").
// * signJwt({key, header, claims}) / hs256(...) / encodeUnsigned(...): raw signers.
// * startJwksServer({keys}): {jwksUrl, fetches, setKeys(), failWith(), close()}.
// * startJwksKit({issuer, audience}): the three keys behind one JWKS server, with
//   mint() for valid tokens and attacks.* for the ones to refuse.

import http from "node:http";
import { createHmac, generateKeyPairSync, randomUUID, sign } from "node:crypto";

export const ALGS = ["RS256", "ES256", "EdDSA"];

const b64url = (value) => Buffer.from(value).toString("base64url");
const json64 = (value) => b64url(JSON.stringify(value));
export const nowSeconds = () => Math.floor(Date.now() / 1000);

// Verifiers usually allow a minute or two of clock skew; an hour is well past any of them.
const SKEW_PROOF_SECONDS = 3600;

/** A fresh key pair for `alg`. `publicPem` is what the HS256 confusion attack keys its HMAC with. */
export function makeKey(alg, kid = `${alg.toLowerCase()}-${randomUUID().slice(0, 8)}`) {
  let pair;
  if (alg === "RS256") pair = generateKeyPairSync("rsa", { modulusLength: 2048 });
  else if (alg === "ES256") pair = generateKeyPairSync("ec", { namedCurve: "P-256" });
  else if (alg === "EdDSA") pair = generateKeyPairSync("ed25519");
  else throw new Error(`makeKey: unsupported alg ${alg} (one of ${ALGS.join(", ")})`);
  const { privateKey, publicKey } = pair;
  return {
    alg,
    kid,
    privateKey,
    publicKey,
    publicPem: publicKey.export({ type: "spki", format: "pem" }),
    jwk: { ...publicKey.export({ format: "jwk" }), kid, alg, use: "sig" },
  };
}

/** `header.payload` with `undefined` members dropped (JSON.stringify's own rule), so overrides can remove fields. */
function signingInput(header, claims) {
  return `${json64(header)}.${json64(claims)}`;
}

/** The raw JWS signature of `input` under `key`, in the encoding JWS expects for its alg. */
function signature(key, input) {
  const data = Buffer.from(input);
  switch (key.alg) {
    case "RS256":
      return sign("sha256", data, key.privateKey);
    case "ES256":
      // JWS wants r||s (64 bytes), not node's default DER.
      return sign("sha256", data, { key: key.privateKey, dsaEncoding: "ieee-p1363" });
    case "EdDSA":
      // Ed25519 hashes internally: no digest name.
      return sign(null, data, key.privateKey);
    default:
      throw new Error(`signJwt: unsupported alg ${key.alg}`);
  }
}

/**
 * A compact JWS over `claims`, signed by `key`. `header` entries override the
 * defaults {alg: key.alg, typ: "JWT", kid: key.kid}; an `undefined` one removes it.
 */
export function signJwt({ key, header = {}, claims = {} }) {
  const input = signingInput({ alg: key.alg, typ: "JWT", kid: key.kid, ...header }, claims);
  return `${input}.${b64url(signature(key, input))}`;
}

/** An HS256 token with `secret` as the HMAC key (the algorithm-confusion attack uses a public PEM). */
export function hs256({ secret, header = {}, claims = {} }) {
  const input = signingInput({ alg: "HS256", typ: "JWT", ...header }, claims);
  return `${input}.${createHmac("sha256", secret).update(input).digest("base64url")}`;
}

/** An unsigned token: `alg: none` and an empty signature segment, as RFC 7519 §6 defines it. */
export function encodeUnsigned({ header = {}, claims = {} }) {
  return `${signingInput({ alg: "none", typ: "JWT", ...header }, claims)}.`;
}

/** Splits a compact JWS into its decoded header and claims and its raw signature. */
export function decodeJwt(token) {
  const [header, payload, sig] = token.split(".");
  return {
    header: JSON.parse(Buffer.from(header, "base64url")),
    claims: JSON.parse(Buffer.from(payload, "base64url")),
    signature: Buffer.from(sig ?? "", "base64url"),
  };
}

/**
 * Serves `{"keys": [...]}` at /.well-known/jwks.json on 127.0.0.1 (a free port).
 * `fetches` counts the GETs, so tests can check a verifier caches and refreshes
 * the set; setKeys() rotates it; failWith(status) simulates an outage (null ends it).
 */
export async function startJwksServer({ keys = [] } = {}) {
  let published = keys;
  let failure = null;
  let fetches = 0;
  const server = http.createServer((req, res) => {
    const path = new URL(req.url, "http://localhost").pathname;
    if (req.method !== "GET" || path !== "/.well-known/jwks.json") {
      res.writeHead(404).end();
      return;
    }
    fetches += 1;
    if (failure !== null) {
      res.writeHead(failure, { "content-type": "text/plain" }).end("jwks unavailable");
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ keys: published.map((k) => k.jwk ?? k) }));
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    jwksUrl: `${url}/.well-known/jwks.json`,
    get fetches() {
      return fetches;
    },
    /** Replaces the published keys (key objects from makeKey, or bare JWKs). */
    setKeys(next) {
      published = next;
    },
    failWith(status) {
      failure = status;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * One key per algorithm (kids `test-rs256`, `test-es256`, `test-eddsa`) published
 * on a JWKS server, plus token factories bound to `issuer` and `audience`.
 * The verifier under test needs HANDOFF_JWT_JWKS_URL=kit.jwksUrl (and
 * HANDOFF_JWT_ALLOW_INSECURE_JWKS=true: the server is plain HTTP), ISSUER, AUDIENCE.
 */
export async function startJwksKit({ issuer = "https://issuer.test/", audience = "handoff-tests" } = {}) {
  const rsa = makeKey("RS256", "test-rs256");
  const ec = makeKey("ES256", "test-es256");
  const ed = makeKey("EdDSA", "test-eddsa");
  const keys = [rsa, ec, ed];
  const byAlg = { RS256: rsa, ES256: ec, EdDSA: ed };
  const server = await startJwksServer({ keys });

  /** Valid claims for now: five minutes of life, a unique jti. `undefined` overrides remove a claim. */
  const claims = (overrides = {}) => {
    const now = nowSeconds();
    return { iss: issuer, aud: audience, sub: "user-1", iat: now, exp: now + 300, jti: randomUUID(), ...overrides };
  };

  const keyFor = ({ alg = "RS256", kid } = {}) => {
    const key = kid === undefined ? byAlg[alg] : keys.find((k) => k.kid === kid);
    if (!key) throw new Error(`mint: no published key for ${kid === undefined ? `alg ${alg}` : `kid ${kid}`}`);
    return key;
  };

  /** A token the verifier must accept: published key (by `alg`, or `kid`), valid claims merged with `claims`. */
  const mint = ({ alg, kid, claims: overrides, header } = {}) =>
    signJwt({ key: keyFor({ alg, kid }), header, claims: claims(overrides) });

  const now = nowSeconds;
  const attacks = {
    /** Unsigned: a verifier that trusts the header's alg would accept it. */
    algNone: ({ claims: overrides } = {}) => encodeUnsigned({ header: { kid: rsa.kid }, claims: claims(overrides) }),
    /**
     * Algorithm confusion: HS256 keyed with the RSA public key's PEM, under the RSA key's
     * kid. A verifier that lets the token pick the algorithm checks it against public data.
     */
    hs256WithPublicKey: ({ claims: overrides } = {}) =>
      hs256({ secret: rsa.publicPem, header: { kid: rsa.kid }, claims: claims(overrides) }),
    /**
     * A kid the JWKS does not have. By default signed by a fresh unpublished key; with
     * `publishedKey: true` by the published RSA key, which catches verifiers that ignore
     * kid and try every key. Either way a refresh of the set must not make it valid.
     */
    unknownKid: ({ claims: overrides, publishedKey = false, kid = "not-in-jwks" } = {}) =>
      signJwt({ key: publishedKey ? rsa : makeKey("RS256"), header: { kid }, claims: claims(overrides) }),
    /** A validly signed token whose payload was then swapped (here: another subject). */
    tampered: ({ alg, claims: overrides = { sub: "admin" } } = {}) => {
      const [header, , sig] = mint({ alg }).split(".");
      return `${header}.${json64(claims(overrides))}.${sig}`;
    },
    expired: ({ alg, claims: overrides } = {}) =>
      mint({
        alg,
        claims: { iat: now() - 2 * SKEW_PROOF_SECONDS, exp: now() - SKEW_PROOF_SECONDS, ...overrides },
      }),
    notYetValid: ({ alg, claims: overrides } = {}) =>
      mint({ alg, claims: { nbf: now() + SKEW_PROOF_SECONDS, exp: now() + 2 * SKEW_PROOF_SECONDS, ...overrides } }),
    wrongIssuer: ({ alg, claims: overrides } = {}) =>
      mint({ alg, claims: { iss: "https://attacker.test/", ...overrides } }),
    wrongAudience: ({ alg, claims: overrides } = {}) =>
      mint({ alg, claims: { aud: "someone-else", ...overrides } }),
  };

  return {
    issuer,
    audience,
    rsa,
    ec,
    ed,
    keys,
    server,
    jwksUrl: server.jwksUrl,
    get fetches() {
      return server.fetches;
    },
    claims,
    mint,
    attacks,
    close: () => server.close(),
  };
}
