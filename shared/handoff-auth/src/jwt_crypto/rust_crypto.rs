//! The wasm32 verifier: `jsonwebtoken`'s RustCrypto checks, without its signers.
//!
//! `jsonwebtoken`'s own `rust_crypto` provider also signs (RSA, ECDSA and Ed25519 private
//! keys, PKCS#1 and PKCS#8 private-key parsing, RFC 6979 nonces), and its provider table
//! keeps all of that linked into the Worker's wasm although Handoff only checks tokens.
//! This provider holds the same verifiers, built from the same crates the same way (the
//! same key checks, the same error kinds), and refuses to sign, as [`super::RING_VERIFIER`]
//! does natively.

use jsonwebtoken::crypto::{CryptoProvider, JwtSigner, JwtVerifier, KeyUtils};
use jsonwebtoken::errors::{Error, ErrorKind};
use jsonwebtoken::jwk::ThumbprintHash;
use jsonwebtoken::signature;
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, DecodingKeyKind, EncodingKey};
use rsa::pkcs1::DecodeRsaPublicKey;
use rsa::pkcs8::AssociatedOid;
use rsa::traits::SignatureScheme;
use rsa::{BoxedUint, Pkcs1v15Sign, Pss, PublicKey as RsaPublicKey};
use sha2::{Digest, Sha256, Sha384, Sha512};

/// Every algorithm `jsonwebtoken` knows (HS*, RS*, PS*, ES256, ES384, EdDSA over Ed25519),
/// verification only: signing is refused (`InvalidAlgorithm`).
// Exported on wasm32 only; the native build compiles it for the unit tests below.
#[cfg_attr(not(target_arch = "wasm32"), allow(unreachable_pub))]
pub static RUST_CRYPTO_VERIFIER: CryptoProvider = CryptoProvider {
    signer_factory: no_signer,
    verifier_factory: verifier,
    key_utils: KeyUtils {
        compute_digest,
        ..KeyUtils::new_unimplemented()
    },
};

fn no_signer(_: &Algorithm, _: &EncodingKey) -> Result<Box<dyn JwtSigner>, Error> {
    Err(ErrorKind::InvalidAlgorithm.into())
}

fn compute_digest(data: &[u8], hash: ThumbprintHash) -> Result<Vec<u8>, Error> {
    Ok(match hash {
        ThumbprintHash::SHA256 => Sha256::digest(data).to_vec(),
        ThumbprintHash::SHA384 => Sha384::digest(data).to_vec(),
        ThumbprintHash::SHA512 => Sha512::digest(data).to_vec(),
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    })
}

type HmacSha256 = hmac::Hmac<Sha256>;
type HmacSha384 = hmac::Hmac<Sha384>;
type HmacSha512 = hmac::Hmac<Sha512>;

/// A key made ready for one algorithm, as `jsonwebtoken`'s verifier of that algorithm holds it.
enum Check {
    Hs256(HmacSha256),
    Hs384(HmacSha384),
    Hs512(HmacSha512),
    Es256(p256::ecdsa::VerifyingKey),
    Es384(p384::ecdsa::VerifyingKey),
    EdDsa(ed25519_dalek::VerifyingKey),
    /// RS* and PS*: the key is parsed when a signature is checked (as upstream does).
    Rsa(DecodingKey),
}

struct RustCryptoVerifier {
    algorithm: Algorithm,
    check: Check,
}

fn verifier(algorithm: &Algorithm, key: &DecodingKey) -> Result<Box<dyn JwtVerifier>, Error> {
    let family = match algorithm {
        Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => AlgorithmFamily::Hmac,
        Algorithm::ES256 | Algorithm::ES384 => AlgorithmFamily::Ec,
        Algorithm::EdDSA => AlgorithmFamily::Ed,
        Algorithm::RS256
        | Algorithm::RS384
        | Algorithm::RS512
        | Algorithm::PS256
        | Algorithm::PS384
        | Algorithm::PS512 => AlgorithmFamily::Rsa,
        _ => return Err(ErrorKind::InvalidAlgorithm.into()),
    };
    // The key must belong to the algorithm's family (an RSA key is never an HMAC secret).
    if key.family() != family {
        return Err(ErrorKind::InvalidKeyFormat.into());
    }
    let hmac_key =
        |key: &DecodingKey| -> Result<Vec<u8>, Error> { Ok(key.try_get_as_bytes()?.to_vec()) };
    let check = match algorithm {
        Algorithm::HS256 => Check::Hs256(hmac_new(&hmac_key(key)?)?),
        Algorithm::HS384 => Check::Hs384(hmac_new(&hmac_key(key)?)?),
        Algorithm::HS512 => Check::Hs512(hmac_new(&hmac_key(key)?)?),
        Algorithm::ES256 => Check::Es256(
            p256::ecdsa::VerifyingKey::from_sec1_bytes(key.try_get_as_bytes()?)
                .map_err(|_| ErrorKind::InvalidEcdsaKey)?,
        ),
        Algorithm::ES384 => Check::Es384(
            p384::ecdsa::VerifyingKey::from_sec1_bytes(key.try_get_as_bytes()?)
                .map_err(|_| ErrorKind::InvalidEcdsaKey)?,
        ),
        Algorithm::EdDSA => {
            // Upstream slices `[..32]` (a panic on a shorter key); a short key is refused here.
            let bytes = key.try_get_as_bytes()?;
            let raw = bytes
                .get(..32)
                .and_then(|head| <&[u8; 32]>::try_from(head).ok())
                .ok_or(ErrorKind::InvalidEddsaKey)?;
            Check::EdDsa(
                ed25519_dalek::VerifyingKey::from_bytes(raw)
                    .map_err(|_| ErrorKind::InvalidEddsaKey)?,
            )
        }
        _ => Check::Rsa(key.clone()),
    };
    Ok(Box::new(RustCryptoVerifier {
        algorithm: *algorithm,
        check,
    }))
}

fn hmac_new<M: hmac::digest::KeyInit>(secret: &[u8]) -> Result<M, Error> {
    M::new_from_slice(secret).map_err(|_| ErrorKind::InvalidKeyFormat.into())
}

fn hmac_verify<M: hmac::Mac + Clone>(
    mac: &M,
    msg: &[u8],
    signature: &[u8],
) -> Result<(), signature::Error> {
    let mut mac = mac.clone();
    mac.update(msg);
    mac.verify_slice(signature)
        .map_err(signature::Error::from_source)
}

fn verify_rsa<S: SignatureScheme, H: Digest + AssociatedOid>(
    scheme: S,
    key: &DecodingKey,
    msg: &[u8],
    signature: &[u8],
) -> Result<(), signature::Error> {
    let digest = H::digest(msg);
    let public = match key.kind() {
        DecodingKeyKind::SecretOrDer(der) => {
            RsaPublicKey::from_pkcs1_der(der).map_err(signature::Error::from_source)?
        }
        DecodingKeyKind::RsaModulusExponent { n, e } => RsaPublicKey::new(
            BoxedUint::from_be_slice_vartime(n),
            BoxedUint::from_be_slice_vartime(e),
        )?,
    };
    public
        .verify(scheme, &digest, signature)
        .map_err(signature::Error::from_source)
}

impl signature::Verifier<Vec<u8>> for RustCryptoVerifier {
    fn verify(&self, msg: &[u8], signature: &Vec<u8>) -> Result<(), signature::Error> {
        match &self.check {
            Check::Hs256(mac) => hmac_verify(mac, msg, signature),
            Check::Hs384(mac) => hmac_verify(mac, msg, signature),
            Check::Hs512(mac) => hmac_verify(mac, msg, signature),
            Check::Es256(key) => key.verify(
                msg,
                &p256::ecdsa::Signature::from_slice(signature)
                    .map_err(signature::Error::from_source)?,
            ),
            Check::Es384(key) => key.verify(
                msg,
                &p384::ecdsa::Signature::from_slice(signature)
                    .map_err(signature::Error::from_source)?,
            ),
            Check::EdDsa(key) => key.verify(msg, &ed25519_dalek::Signature::from_slice(signature)?),
            Check::Rsa(key) => match self.algorithm {
                Algorithm::RS256 => {
                    verify_rsa::<_, Sha256>(Pkcs1v15Sign::new::<Sha256>(), key, msg, signature)
                }
                Algorithm::RS384 => {
                    verify_rsa::<_, Sha384>(Pkcs1v15Sign::new::<Sha384>(), key, msg, signature)
                }
                Algorithm::RS512 => {
                    verify_rsa::<_, Sha512>(Pkcs1v15Sign::new::<Sha512>(), key, msg, signature)
                }
                Algorithm::PS256 => {
                    verify_rsa::<_, Sha256>(Pss::<Sha256>::new(), key, msg, signature)
                }
                Algorithm::PS384 => {
                    verify_rsa::<_, Sha384>(Pss::<Sha384>::new(), key, msg, signature)
                }
                _ => verify_rsa::<_, Sha512>(Pss::<Sha512>::new(), key, msg, signature),
            },
        }
    }
}

impl JwtVerifier for RustCryptoVerifier {
    fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
}

/// Checked natively against `jsonwebtoken`'s own RustCrypto provider (the dev-dependency turns
/// it on): tokens it signs verify here, and every case (valid, altered, wrong key family,
/// wrong key) gets the same outcome from both providers.
#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::crypto::{CryptoProvider, rust_crypto};
    use jsonwebtoken::jwk::Jwk;
    use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey};

    use super::RUST_CRYPTO_VERIFIER;

    const RSA_PEM: &str = include_str!("../../tests/fixtures/rsa.pem");
    const RSA_PUBLIC_PEM: &str = include_str!("../../tests/fixtures/rsa.pub.pem");
    const EC_PEM: &str = include_str!("../../tests/fixtures/ec.pem");
    const ED_PEM: &str = include_str!("../../tests/fixtures/ed25519.pem");
    const SECRET: &[u8] = b"a shared secret of some length";

    /// The signing key for `alg` and the public keys a verifier is given for it (RSA both as
    /// JWK components and as PKCS#1 DER).
    fn keys(alg: Algorithm) -> (EncodingKey, Vec<DecodingKey>) {
        let from_jwk = |key: &EncodingKey| {
            let jwk = Jwk::from_encoding_key(key, alg).expect("jwk");
            DecodingKey::from_jwk(&jwk).expect("decoding key")
        };
        match alg {
            Algorithm::HS256 | Algorithm::HS384 | Algorithm::HS512 => (
                EncodingKey::from_secret(SECRET).expect("secret"),
                vec![DecodingKey::from_secret(SECRET).expect("secret")],
            ),
            Algorithm::ES256 => {
                let key = EncodingKey::from_ec_pem(EC_PEM.as_bytes()).expect("ec");
                let public = from_jwk(&key);
                (key, vec![public])
            }
            Algorithm::EdDSA => {
                let key = EncodingKey::from_ed_pem(ED_PEM.as_bytes()).expect("ed25519");
                let public = from_jwk(&key);
                (key, vec![public])
            }
            _ => {
                let key = EncodingKey::from_rsa_pem(RSA_PEM.as_bytes()).expect("rsa");
                let der = DecodingKey::from_rsa_pem(RSA_PUBLIC_PEM.as_bytes()).expect("rsa der");
                let public = from_jwk(&key);
                (key, vec![public, der])
            }
        }
    }

    /// `Ok(true)` verified, `Ok(false)` a refused signature, `Err` a refused key.
    fn outcome(
        provider: &CryptoProvider,
        alg: Algorithm,
        key: &DecodingKey,
        msg: &[u8],
        signature: &[u8],
    ) -> Result<bool, String> {
        let verifier = (provider.verifier_factory)(&alg, key).map_err(|e| format!("{e:?}"))?;
        Ok(verifier.verify(msg, &signature.to_vec()).is_ok())
    }

    #[test]
    fn verifies_as_jsonwebtokens_rust_crypto_backend_does() {
        // ES384 has no fixture key; it goes through the same code as ES256 with p384's types.
        let algorithms = [
            Algorithm::HS256,
            Algorithm::HS384,
            Algorithm::HS512,
            Algorithm::RS256,
            Algorithm::RS384,
            Algorithm::RS512,
            Algorithm::PS256,
            Algorithm::PS384,
            Algorithm::PS512,
            Algorithm::ES256,
            Algorithm::EdDSA,
        ];
        let msg = b"header.claims";
        let (_, hmac_keys) = keys(Algorithm::HS256);
        let (_, rsa_keys) = keys(Algorithm::RS256);
        for alg in algorithms {
            let (signing, publics) = keys(alg);
            let signature = jsonwebtoken::crypto::sign(msg, &signing, alg).expect("sign");
            let signature = URL_SAFE_NO_PAD.decode(signature).expect("base64url");
            let mut altered = signature.clone();
            altered[0] ^= 1;
            let mut cases = Vec::new();
            for key in &publics {
                cases.push((key, &msg[..], &signature, Ok(true)));
                cases.push((key, &b"header.other"[..], &signature, Ok(false)));
                cases.push((key, &msg[..], &altered, Ok(false)));
            }
            // A key of another family is refused before any signature is looked at.
            let stranger = if alg.family() == jsonwebtoken::AlgorithmFamily::Rsa {
                &hmac_keys[0]
            } else {
                &rsa_keys[0]
            };
            let refused = Err(format!(
                "{:?}",
                jsonwebtoken::errors::Error::from(
                    jsonwebtoken::errors::ErrorKind::InvalidKeyFormat
                )
            ));
            cases.push((stranger, &msg[..], &signature, refused));
            for (key, msg, signature, expected) in cases {
                let ours = outcome(&RUST_CRYPTO_VERIFIER, alg, key, msg, signature);
                let upstream = outcome(&rust_crypto::DEFAULT_PROVIDER, alg, key, msg, signature);
                assert_eq!(ours, expected, "{alg:?}");
                assert_eq!(ours, upstream, "{alg:?}: as upstream");
            }
        }
    }

    #[test]
    fn refuses_to_sign() {
        let (key, _) = keys(Algorithm::RS256);
        assert!((RUST_CRYPTO_VERIFIER.signer_factory)(&Algorithm::RS256, &key).is_err());
    }
}
