//! The signature checks behind every JWT Handoff verifies (A2A push tokens, `HANDOFF_AUTH=jwt`,
//! Cloudflare Access).
//!
//! `jsonwebtoken` delegates its cryptography to a process-wide `CryptoProvider`. On native
//! targets that is [`RING_VERIFIER`]: verification only, on `ring`, the library the TLS stack
//! (rustls) already links, instead of `jsonwebtoken`'s RustCrypto backend (RSA, P-256, P-384
//! and Ed25519 in pure Rust, about 0.2 MB of a Lambda bootstrap for what ring already does).
//! On wasm32 (Workers, where ring is not used) it is [`RUST_CRYPTO_VERIFIER`]: the RustCrypto
//! verifiers of `jsonwebtoken`'s backend without its signers (about 20 KB of the gzipped
//! Worker wasm that only ever signed nothing).
//!
//! [`install`] runs before every verification. If the build already selects a provider
//! (another crate enabled `jsonwebtoken`'s `rust_crypto` or `aws_lc_rs`, or the application
//! installed one), that one is kept.

use jsonwebtoken::crypto::CryptoProvider;

/// Makes sure `jsonwebtoken` has a crypto provider: the one the build or the application
/// chose, else [`RING_VERIFIER`] (native targets) or [`RUST_CRYPTO_VERIFIER`] (wasm32).
pub fn install() {
    if CryptoProvider::try_get_default().is_none() {
        // Losing a race with another installer is fine: either provider verifies.
        #[cfg(not(target_arch = "wasm32"))]
        let _ = ring_verifier::RING_VERIFIER.install_default();
        #[cfg(target_arch = "wasm32")]
        let _ = rust_crypto::RUST_CRYPTO_VERIFIER.install_default();
    }
}

#[cfg(not(target_arch = "wasm32"))]
pub use ring_verifier::RING_VERIFIER;

// Also compiled for the native unit tests, which compare it with jsonwebtoken's own backend.
#[cfg(any(target_arch = "wasm32", test))]
mod rust_crypto;
#[cfg(target_arch = "wasm32")]
pub use rust_crypto::RUST_CRYPTO_VERIFIER;

#[cfg(not(target_arch = "wasm32"))]
mod ring_verifier {
    use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
    use jsonwebtoken::errors::{Error, ErrorKind};
    use jsonwebtoken::jwk::ThumbprintHash;
    use jsonwebtoken::signature;
    use jsonwebtoken::{Algorithm, DecodingKey, DecodingKeyKind, EncodingKey};
    use ring::signature as sig;

    /// A `jsonwebtoken` provider on `ring` that verifies every algorithm `jsonwebtoken` knows
    /// (HS*, RS*, PS* with 2048 to 8192-bit keys, ES256, ES384, EdDSA over Ed25519) and signs
    /// ES256 only (the A2A push notifications Handoff sends, `crate::push_keys`); any other
    /// signature is refused (`InvalidAlgorithm`).
    pub static RING_VERIFIER: CryptoProvider = CryptoProvider {
        signer_factory: es256_signer,
        verifier_factory: verifier,
        key_utils: KeyUtils {
            compute_digest,
            ..KeyUtils::new_unimplemented()
        },
    };

    /// An ES256 signer over a PKCS#8 P-256 key (`EncodingKey::from_ec_der`).
    struct Es256Signer(sig::EcdsaKeyPair);

    fn es256_signer(algorithm: &Algorithm, key: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
        if *algorithm != Algorithm::ES256 {
            return Err(ErrorKind::InvalidAlgorithm.into());
        }
        let rng = ring::rand::SystemRandom::new();
        sig::EcdsaKeyPair::from_pkcs8(&sig::ECDSA_P256_SHA256_FIXED_SIGNING, key.as_bytes(), &rng)
            .map(|pair| Box::new(Es256Signer(pair)) as Box<dyn JwtSigner>)
            .map_err(|_| ErrorKind::InvalidEcdsaKey.into())
    }

    impl signature::Signer<Vec<u8>> for Es256Signer {
        fn try_sign(&self, msg: &[u8]) -> Result<Vec<u8>, signature::Error> {
            let rng = ring::rand::SystemRandom::new();
            let signed = self
                .0
                .sign(&rng, msg)
                .map_err(|_| signature::Error::new())?;
            Ok(signed.as_ref().to_vec())
        }
    }

    impl JwtSigner for Es256Signer {
        fn algorithm(&self) -> Algorithm {
            Algorithm::ES256
        }
    }

    fn compute_digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>, Error> {
        let algorithm = match hash {
            ThumbprintHash::SHA256 => &ring::digest::SHA256,
            ThumbprintHash::SHA384 => &ring::digest::SHA384,
            ThumbprintHash::SHA512 => &ring::digest::SHA512,
            _ => return Err(ErrorKind::InvalidAlgorithm.into()),
        };
        Ok(ring::digest::digest(algorithm, data).as_ref().to_vec())
    }

    /// How one algorithm checks a signature.
    #[derive(Clone, Copy)]
    enum Check {
        Hmac(ring::hmac::Algorithm),
        Rsa(&'static sig::RsaParameters),
        /// ECDSA (fixed-width `r || s`, as JWS encodes it) or Ed25519 over a raw public key.
        Raw(&'static dyn sig::VerificationAlgorithm),
    }

    struct RingVerifier {
        algorithm: Algorithm,
        check: Check,
        key: DecodingKey,
    }

    fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
        let check = match algorithm {
            Algorithm::HS256 => Check::Hmac(ring::hmac::HMAC_SHA256),
            Algorithm::HS384 => Check::Hmac(ring::hmac::HMAC_SHA384),
            Algorithm::HS512 => Check::Hmac(ring::hmac::HMAC_SHA512),
            Algorithm::RS256 => Check::Rsa(&sig::RSA_PKCS1_2048_8192_SHA256),
            Algorithm::RS384 => Check::Rsa(&sig::RSA_PKCS1_2048_8192_SHA384),
            Algorithm::RS512 => Check::Rsa(&sig::RSA_PKCS1_2048_8192_SHA512),
            Algorithm::PS256 => Check::Rsa(&sig::RSA_PSS_2048_8192_SHA256),
            Algorithm::PS384 => Check::Rsa(&sig::RSA_PSS_2048_8192_SHA384),
            Algorithm::PS512 => Check::Rsa(&sig::RSA_PSS_2048_8192_SHA512),
            Algorithm::ES256 => Check::Raw(&sig::ECDSA_P256_SHA256_FIXED),
            Algorithm::ES384 => Check::Raw(&sig::ECDSA_P384_SHA384_FIXED),
            Algorithm::EdDSA => Check::Raw(&sig::ED25519),
            _ => return Err(ErrorKind::InvalidAlgorithm.into()),
        };
        // The key must belong to the algorithm's family (an RSA key is never an HMAC secret).
        if key.family() != algorithm.family() {
            return Err(ErrorKind::InvalidKeyFormat.into());
        }
        Ok(Box::new(RingVerifier {
            algorithm: *algorithm,
            check,
            key: key.clone(),
        }))
    }

    impl signature::Verifier<Vec<u8>> for RingVerifier {
        fn verify(&self, msg: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
            let ok = match (self.check, self.key.kind()) {
                (Check::Hmac(algorithm), DecodingKeyKind::SecretOrDer(secret)) => {
                    let key = ring::hmac::Key::new(algorithm, secret);
                    ring::hmac::verify(&key, msg, signature).is_ok()
                }
                (Check::Rsa(params), DecodingKeyKind::RsaModulusExponent { n, e }) => {
                    sig::RsaPublicKeyComponents { n, e }
                        .verify(params, msg, signature)
                        .is_ok()
                }
                // An RSA key given as DER (`from_rsa_der` / `from_rsa_pem`): PKCS#1 RSAPublicKey.
                (Check::Rsa(params), DecodingKeyKind::SecretOrDer(der)) => {
                    sig::UnparsedPublicKey::new(params, der)
                        .verify(msg, signature)
                        .is_ok()
                }
                (Check::Raw(algorithm), DecodingKeyKind::SecretOrDer(public)) => {
                    sig::UnparsedPublicKey::new(algorithm, public)
                        .verify(msg, signature)
                        .is_ok()
                }
                _ => false,
            };
            if ok {
                Ok(())
            } else {
                Err(signature::Error::new())
            }
        }
    }

    impl JwtVerifier for RingVerifier {
        fn algorithm(&self) -> Algorithm {
            self.algorithm
        }
    }
}
