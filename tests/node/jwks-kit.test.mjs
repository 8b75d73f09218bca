// Self-test of lib/jwks.mjs: every token it mints verifies with node:crypto
// against the JWKS it serves, and every attack token fails for the reason it
// was built for. Without this a kit bug could make a verifier test pass for the
// wrong reason (e.g. "expired" rejected because its signature was broken).
//
//   cd tests/node && node --test jwks-kit.test.mjs

import assert from "node:assert/strict";
import { createHmac, createPublicKey, verify } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { ALGS, decodeJwt, makeKey, startJwksKit, startJwksServer } from "./lib/jwks.mjs";

let kit;

before(async () => {
  kit = await startJwksKit();
});

after(async () => {
  await kit?.close();
});

async function fetchJwks(url = kit.jwksUrl) {
  const res = await fetch(url);
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /application\/json/);
  return (await res.json()).keys;
}

/** Does the signature of `token` verify under the public `jwk` (with the JWK's own alg)? */
function signatureValid(token, jwk) {
  const [header, payload, sig] = token.split(".");
  const input = Buffer.from(`${header}.${payload}`);
  const signature = Buffer.from(sig, "base64url");
  const key = createPublicKey({ key: jwk, format: "jwk" });
  switch (jwk.alg) {
    case "RS256":
      return verify("sha256", input, key, signature);
    case "ES256":
      return verify("sha256", input, { key, dsaEncoding: "ieee-p1363" }, signature);
    case "EdDSA":
      return verify(null, input, key, signature);
    default:
      throw new Error(`unexpected alg ${jwk.alg}`);
  }
}

/**
 * A strict verifier, as HANDOFF_AUTH=jwt should be: the key comes from the JWKS by kid,
 * the algorithm from the key (never from the token), then signature, time and claims.
 * Returns "ok" or the first reason for refusal.
 */
function check(token, jwks, now = Math.floor(Date.now() / 1000)) {
  const { header, claims } = decodeJwt(token);
  const jwk = jwks.find((k) => k.kid === header.kid);
  if (!jwk) return "unknown kid";
  if (header.alg !== jwk.alg) return "alg mismatch";
  if (!signatureValid(token, jwk)) return "bad signature";
  if (typeof claims.exp !== "number" || claims.exp <= now) return "expired";
  if (typeof claims.nbf === "number" && claims.nbf > now) return "not yet valid";
  if (claims.iss !== kit.issuer) return "wrong issuer";
  if (claims.aud !== kit.audience) return "wrong audience";
  return "ok";
}

describe("keys and JWKS", () => {
  test("publishes one public signing key per algorithm, with kid, alg and use", async () => {
    const keys = await fetchJwks();
    assert.deepEqual(keys.map((k) => k.alg).sort(), [...ALGS].sort());
    const byAlg = Object.fromEntries(keys.map((k) => [k.alg, k]));
    assert.equal(byAlg.RS256.kty, "RSA");
    assert.equal(byAlg.ES256.kty, "EC");
    assert.equal(byAlg.ES256.crv, "P-256");
    assert.equal(byAlg.EdDSA.kty, "OKP");
    assert.equal(byAlg.EdDSA.crv, "Ed25519");
    for (const jwk of keys) {
      assert.equal(jwk.use, "sig");
      assert.ok(jwk.kid);
      // Public halves only: no private RSA/EC/OKP members.
      for (const secret of ["d", "p", "q", "dp", "dq", "qi"]) assert.equal(jwk[secret], undefined, `${jwk.kid}.${secret}`);
    }
  });

  test("counts fetches, rotates keys, simulates outages and 404s other paths", async () => {
    const server = await startJwksServer({ keys: [makeKey("ES256", "a")] });
    try {
      assert.equal(server.fetches, 0);
      assert.deepEqual((await fetchJwks(server.jwksUrl)).map((k) => k.kid), ["a"]);
      server.setKeys([makeKey("EdDSA", "b")]);
      assert.deepEqual((await fetchJwks(server.jwksUrl)).map((k) => k.kid), ["b"]);
      server.failWith(503);
      assert.equal((await fetch(server.jwksUrl)).status, 503);
      server.failWith(null);
      assert.equal((await fetch(`${server.url}/jwks.json`)).status, 404);
      assert.equal(server.fetches, 3, "only GETs of the JWKS path count");
    } finally {
      await server.close();
    }
  });
});

describe("minted tokens", () => {
  for (const alg of ALGS) {
    test(`${alg} verifies against the served JWKS`, async () => {
      const token = kit.mint({ alg, claims: { tid: "acme", roles: ["approver"] } });
      const { header, claims, signature } = decodeJwt(token);
      assert.equal(header.alg, alg);
      assert.equal(header.typ, "JWT");
      assert.equal(check(token, await fetchJwks()), "ok");
      assert.equal(claims.tid, "acme");
      assert.deepEqual(claims.roles, ["approver"]);
      assert.equal(claims.iss, kit.issuer);
      assert.equal(claims.aud, kit.audience);
      if (alg !== "RS256") assert.equal(signature.length, 64, "ES256 r||s and Ed25519 signatures are 64 bytes");
    });
  }

  test("header overrides apply, and undefined removes a claim or header field", () => {
    const token = kit.mint({ alg: "ES256", header: { typ: "at+jwt", cty: undefined }, claims: { jti: undefined } });
    const { header, claims } = decodeJwt(token);
    assert.equal(header.typ, "at+jwt");
    assert.equal(header.kid, kit.ec.kid);
    assert.ok(!("jti" in claims));
  });

  test("picks a key by kid", async () => {
    const token = kit.mint({ kid: kit.ed.kid });
    assert.equal(decodeJwt(token).header.alg, "EdDSA");
    assert.equal(check(token, await fetchJwks()), "ok");
  });
});

describe("attack tokens fail for their own reason", () => {
  test("alg none carries no signature", async () => {
    const token = kit.attacks.algNone();
    assert.ok(token.endsWith("."));
    assert.equal(decodeJwt(token).header.alg, "none");
    assert.equal(check(token, await fetchJwks()), "alg mismatch");
  });

  test("HS256 keyed with the RSA public PEM is a real HMAC over that public data", async () => {
    const token = kit.attacks.hs256WithPublicKey();
    const [h, p, s] = token.split(".");
    // What a confused verifier would compute from the published key: it matches.
    assert.equal(createHmac("sha256", kit.rsa.publicPem).update(`${h}.${p}`).digest("base64url"), s);
    const { header } = decodeJwt(token);
    assert.equal(header.alg, "HS256");
    assert.equal(header.kid, kit.rsa.kid);
    assert.equal(check(token, await fetchJwks()), "alg mismatch");
    assert.equal(signatureValid(token, kit.rsa.jwk), false);
  });

  test("unknown kid, signed by an unpublished key or by a published one", async () => {
    const jwks = await fetchJwks();
    for (const token of [kit.attacks.unknownKid(), kit.attacks.unknownKid({ publishedKey: true })]) {
      assert.equal(decodeJwt(token).header.kid, "not-in-jwks");
      assert.equal(check(token, jwks), "unknown kid");
    }
    // The published-key variant verifies under the RSA key: only the kid lookup refuses it.
    const token = kit.attacks.unknownKid({ publishedKey: true });
    assert.equal(signatureValid(token, kit.rsa.jwk), true);
    assert.equal(signatureValid(kit.attacks.unknownKid(), kit.rsa.jwk), false);
  });

  for (const alg of ALGS) {
    test(`tampered payload (${alg}) breaks the signature`, async () => {
      const token = kit.attacks.tampered({ alg });
      assert.equal(decodeJwt(token).claims.sub, "admin");
      assert.equal(check(token, await fetchJwks()), "bad signature");
    });
  }

  test("time and claim attacks are validly signed, so only the claims refuse them", async () => {
    const jwks = await fetchJwks();
    const cases = [
      [kit.attacks.expired(), "expired"],
      [kit.attacks.notYetValid({ alg: "ES256" }), "not yet valid"],
      [kit.attacks.wrongIssuer({ alg: "EdDSA" }), "wrong issuer"],
      [kit.attacks.wrongAudience(), "wrong audience"],
    ];
    for (const [token, reason] of cases) {
      const { header } = decodeJwt(token);
      assert.equal(signatureValid(token, jwks.find((k) => k.kid === header.kid)), true, reason);
      assert.equal(check(token, jwks), reason);
    }
    // Far outside any clock-skew leeway.
    const now = Math.floor(Date.now() / 1000);
    assert.ok(decodeJwt(kit.attacks.expired()).claims.exp < now - 600);
    assert.ok(decodeJwt(kit.attacks.notYetValid()).claims.nbf > now + 600);
  });

  test("fetches are counted across the tests", () => {
    assert.ok(kit.fetches >= 8, `fetches: ${kit.fetches}`);
  });
});
