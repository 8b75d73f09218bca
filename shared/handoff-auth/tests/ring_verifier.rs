//! `HANDOFF_AUTH=jwt` with signatures checked by `handoff_auth::jwt_crypto::RING_VERIFIER`, the
//! provider native hosts install (the other tests run with jsonwebtoken's RustCrypto backend,
//! which their dev-dependency turns on). One test: the provider is process-wide.

#[path = "auth/support.rs"]
#[allow(dead_code)]
mod support;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use handoff_auth::jwt_crypto::RING_VERIFIER;
use jsonwebtoken::crypto::{CryptoProvider, rust_crypto};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::json;

use support::*;

#[test]
fn ring_checks_rs256_es256_and_eddsa_and_refuses_bad_signatures() {
    // Test tokens are signed by RustCrypto (ring's provider only verifies); every check is ring's.
    let provider: &'static CryptoProvider = Box::leak(Box::new(CryptoProvider {
        signer_factory: rust_crypto::DEFAULT_PROVIDER.signer_factory,
        verifier_factory: RING_VERIFIER.verifier_factory,
        key_utils: rust_crypto::DEFAULT_PROVIDER.key_utils.clone(),
    }));
    assert!(
        provider.install_default().is_ok(),
        "nothing installed before"
    );
    // The provider alone refuses to sign.
    let key = encoding_key(Algorithm::RS256);
    assert!((RING_VERIFIER.signer_factory)(&Algorithm::RS256, &key).is_err());

    for alg in [Algorithm::RS256, Algorithm::ES256, Algorithm::EdDSA] {
        let principal =
            run(&jwt(), &bearer(&sign(alg, &claims()))).unwrap_or_else(|e| panic!("{alg:?}: {e}"));
        assert_eq!(principal.subject, "user-42", "{alg:?}");

        // Claims changed after signing.
        let token = sign(alg, &claims());
        let mut parts: Vec<String> = token.split('.').map(str::to_owned).collect();
        let mut forged = claims();
        forged["sub"] = json!("admin");
        parts[1] = URL_SAFE_NO_PAD.encode(forged.to_string());
        assert_eq!(
            unauthenticated(run(&jwt(), &bearer(&parts.join(".")))),
            "bad signature",
            "{alg:?}"
        );
        // A signature over other claims.
        let mut other = claims();
        other["sub"] = json!("someone-else");
        let other = sign(alg, &other);
        let (signed, _) = token.rsplit_once('.').unwrap();
        let swapped = format!("{signed}.{}", other.rsplit_once('.').unwrap().1);
        assert_eq!(
            unauthenticated(run(&jwt(), &bearer(&swapped))),
            "bad signature",
            "{alg:?}"
        );
    }

    // Signed by the EC key under the RSA key's kid: the RSA key does not verify it.
    let foreign = sign_with(Algorithm::ES256, Some("rsa-1"), &claims());
    unauthenticated(run(&jwt(), &bearer(&foreign)));

    // An HMAC "signature" keyed with the public key never reaches a verifier.
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some("rsa-1".to_owned());
    let hs = jsonwebtoken::encode(
        &header,
        &claims(),
        &EncodingKey::from_secret(RSA_PUBLIC_PEM.as_bytes()).unwrap(),
    )
    .unwrap();
    assert_eq!(
        unauthenticated(run(&jwt(), &bearer(&hs))),
        "unsupported algorithm"
    );

    // Directly: a key of another family is refused before any check.
    let rsa_key = jsonwebtoken::DecodingKey::from_jwk(&jwk(Algorithm::RS256, "rsa-1")).unwrap();
    assert!((RING_VERIFIER.verifier_factory)(&Algorithm::ES256, &rsa_key).is_err());
    assert!((RING_VERIFIER.verifier_factory)(&Algorithm::HS256, &rsa_key).is_err());
}
