//! Keys, tokens and requests for the tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use handoff_auth::{AuthError, Authenticator, Jwt, JwtConfig, Principal};
use handoff_auth::{JwkSet, JwksError, JwksSource, StaticJwks};
use handoff_core::runtime::ManualClock;
use http::request::Parts;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// The fixed "now" of every test, in Unix seconds.
pub(crate) const NOW: u64 = 1_800_000_000;
pub(crate) const JWKS_URL: &str = "https://idp.example.com/.well-known/jwks.json";
pub(crate) const ISSUER: &str = "https://idp.example.com/";
pub(crate) const AUDIENCE: &str = "handoff-api";

pub(crate) const RSA_PEM: &str = include_str!("../fixtures/rsa.pem");
pub(crate) const RSA_PUBLIC_PEM: &str = include_str!("../fixtures/rsa.pub.pem");
pub(crate) const EC_PEM: &str = include_str!("../fixtures/ec.pem");
pub(crate) const ED_PEM: &str = include_str!("../fixtures/ed25519.pem");

/// `HANDOFF_AUTH=jwt` settings for the test identity provider.
pub(crate) fn jwt_config() -> JwtConfig {
    JwtConfig {
        jwks_url: JWKS_URL.to_owned(),
        issuer: ISSUER.to_owned(),
        audience: AUDIENCE.to_owned(),
        tenant_claim: "tid".to_owned(),
        roles_claim: "roles".to_owned(),
        allow_insecure_jwks: false,
    }
}

/// The JWT authenticator over the test key set.
pub(crate) fn jwt() -> Jwt {
    Jwt::new(jwt_config(), static_jwks(JWKS_URL, key_set()), clock())
}

pub(crate) fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(NOW * 1000))
}

pub(crate) fn encoding_key(alg: Algorithm) -> EncodingKey {
    match alg {
        Algorithm::RS256 => EncodingKey::from_rsa_pem(RSA_PEM.as_bytes()),
        Algorithm::ES256 => EncodingKey::from_ec_pem(EC_PEM.as_bytes()),
        Algorithm::EdDSA => EncodingKey::from_ed_pem(ED_PEM.as_bytes()),
        other => panic!("no fixture for {other:?}"),
    }
    .expect("fixture key")
}

/// The public JWK of the fixture for `alg`, published as `kid`.
pub(crate) fn jwk(alg: Algorithm, kid: &str) -> Jwk {
    let mut jwk = Jwk::from_encoding_key(&encoding_key(alg), alg).expect("jwk");
    jwk.common.key_id = Some(kid.to_owned());
    jwk
}

/// A set with the RSA (`rsa-1`), EC (`ec-1`) and Ed25519 (`ed-1`) fixtures.
pub(crate) fn key_set() -> JwkSet {
    JwkSet {
        keys: vec![
            jwk(Algorithm::RS256, "rsa-1"),
            jwk(Algorithm::ES256, "ec-1"),
            jwk(Algorithm::EdDSA, "ed-1"),
        ],
    }
}

pub(crate) fn kid_of(alg: Algorithm) -> &'static str {
    match alg {
        Algorithm::RS256 => "rsa-1",
        Algorithm::ES256 => "ec-1",
        _ => "ed-1",
    }
}

/// Claims valid at [`NOW`] for [`ISSUER`] / [`AUDIENCE`].
pub(crate) fn claims() -> Value {
    json!({
        "iss": ISSUER,
        "aud": AUDIENCE,
        "sub": "user-42",
        "iat": NOW,
        "exp": NOW + 300,
    })
}

/// `claims` signed with the fixture key for `alg` under `kid`.
pub(crate) fn sign_with(alg: Algorithm, kid: Option<&str>, claims: &Value) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, &encoding_key(alg)).expect("sign")
}

pub(crate) fn sign(alg: Algorithm, claims: &Value) -> String {
    sign_with(alg, Some(kid_of(alg)), claims)
}

pub(crate) fn static_jwks(url: &str, set: JwkSet) -> Arc<dyn JwksSource> {
    Arc::new(StaticJwks::new().with(url, set))
}

/// Request parts carrying `headers`.
pub(crate) fn request(headers: &[(&str, &str)]) -> Parts {
    let mut builder = http::Request::builder().uri("/agent");
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(()).expect("request").into_parts().0
}

pub(crate) fn bearer(token: &str) -> Parts {
    request(&[("authorization", &format!("Bearer {token}"))])
}

pub(crate) fn run(auth: &dyn Authenticator, parts: &Parts) -> Result<Principal, AuthError> {
    futures::executor::block_on(auth.authenticate(parts))
}

/// The message of an expected 401.
#[track_caller]
pub(crate) fn unauthenticated(result: Result<Principal, AuthError>) -> String {
    match result {
        Err(AuthError::Unauthenticated(message)) => message,
        other => panic!("expected Unauthenticated, got {other:?}"),
    }
}

/// A key source that counts fetches (and refreshes) and can be made to fail.
pub(crate) struct CountingJwks {
    pub(crate) inner: Option<StaticJwks>,
    pub(crate) fetches: AtomicUsize,
    pub(crate) refreshes: AtomicUsize,
}

impl CountingJwks {
    pub(crate) fn new(inner: Option<StaticJwks>) -> Arc<Self> {
        Arc::new(CountingJwks {
            inner,
            fetches: AtomicUsize::new(0),
            refreshes: AtomicUsize::new(0),
        })
    }
}

#[async_trait]
impl JwksSource for CountingJwks {
    async fn key_set(
        &self,
        url: &str,
        now_ms: u64,
        refresh: bool,
    ) -> Result<Arc<JwkSet>, JwksError> {
        self.fetches.fetch_add(1, Ordering::SeqCst);
        if refresh {
            self.refreshes.fetch_add(1, Ordering::SeqCst);
        }
        match &self.inner {
            Some(inner) => inner.key_set(url, now_ms, refresh).await,
            None => Err(JwksError("connection refused".to_owned())),
        }
    }
}
