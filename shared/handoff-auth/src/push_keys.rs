//! The key Handoff signs its A2A push notifications with: one ES256 key per deployment, kept
//! in the store (created by whichever instance needs it first), so every instance signs with
//! it and publishes it at `/.well-known/jwks.json`. Native hosts only (`ring`).

use std::sync::{Arc, Mutex};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use futures::future::BoxFuture;
use handoff_core::{Condition, Runtime, Store, Write};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::signature::{self as sig, KeyPair};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::PushSigner;

const PARTITION: &str = "\u{1f}keys";
const KEY: &str = "a2a-push-es256";

/// The stored key: its id, its PKCS#8 document (base64) and its public point.
#[derive(Serialize, Deserialize)]
struct StoredKey {
    kid: String,
    pkcs8: String,
    x: String,
    y: String,
}

/// Signs push-notification JWTs with the deployment's key, read (or made) once per process.
pub struct PushKeys {
    store: Arc<dyn Store>,
    runtime: Runtime,
    cached: Mutex<Option<Arc<StoredKey>>>,
}

impl std::fmt::Debug for PushKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PushKeys").finish_non_exhaustive()
    }
}

impl PushKeys {
    /// The keys of the deployment whose store is `store`.
    pub fn new(store: Arc<dyn Store>, runtime: Runtime) -> Self {
        crate::jwt_crypto::install();
        PushKeys {
            store,
            runtime,
            cached: Mutex::new(None),
        }
    }

    async fn key(&self) -> Result<Arc<StoredKey>, String> {
        if let Some(key) = self.cached.lock().map_err(|e| e.to_string())?.clone() {
            return Ok(key);
        }
        let now = self.runtime.now_ms();
        for _ in 0..2 {
            let item = self
                .store
                .get_one(PARTITION, KEY, now)
                .await
                .map_err(|e| e.to_string())?;
            if let Some(item) = item {
                let key: StoredKey =
                    serde_json::from_slice(&item.value).map_err(|e| e.to_string())?;
                let key = Arc::new(key);
                *self.cached.lock().map_err(|e| e.to_string())? = Some(key.clone());
                return Ok(key);
            }
            let made = serde_json::to_vec(&generate(self.runtime.ids.next_id("k"))?)
                .map_err(|e| e.to_string())?;
            // Whoever creates it first wins; the others read theirs.
            let write = Write::put(KEY, Condition::Absent, made, None);
            let _ = self.store.commit(PARTITION, vec![write], now).await;
        }
        Err("the push-signing key could not be read or made".into())
    }
}

/// A fresh P-256 key pair.
fn generate(kid: String) -> Result<StoredKey, String> {
    let rng = ring::rand::SystemRandom::new();
    let alg = &sig::ECDSA_P256_SHA256_FIXED_SIGNING;
    let pkcs8 = sig::EcdsaKeyPair::generate_pkcs8(alg, &rng).map_err(|e| e.to_string())?;
    let pair =
        sig::EcdsaKeyPair::from_pkcs8(alg, pkcs8.as_ref(), &rng).map_err(|e| e.to_string())?;
    // Uncompressed point: 0x04, then x and y, 32 bytes each.
    let point = pair.public_key().as_ref();
    Ok(StoredKey {
        kid,
        pkcs8: STANDARD.encode(pkcs8.as_ref()),
        x: URL_SAFE_NO_PAD.encode(&point[1..33]),
        y: URL_SAFE_NO_PAD.encode(&point[33..65]),
    })
}

impl PushSigner for PushKeys {
    fn sign<'a>(&'a self, claims: &'a Value) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let key = self.key().await?;
            let der = STANDARD.decode(&key.pkcs8).map_err(|e| e.to_string())?;
            let mut header = Header::new(Algorithm::ES256);
            header.kid = Some(key.kid.clone());
            jsonwebtoken::encode(&header, claims, &EncodingKey::from_ec_der(&der))
                .map_err(|e| e.to_string())
        })
    }

    fn jwks(&self) -> BoxFuture<'_, Result<Value, String>> {
        Box::pin(async move {
            let key = self.key().await?;
            Ok(json!({"keys": [{
                "kty": "EC", "crv": "P-256", "x": key.x, "y": key.y,
                "kid": key.kid, "alg": "ES256", "use": "sig",
            }]}))
        })
    }
}
