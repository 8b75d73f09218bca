//! The Init warm-up: the store's connection opened before the first request.

use handoff_core::Store;

use super::startup_mark;

/// How long Init waits for the warm-up read before serving anyway.
const WARM_UP_TIMEOUT_MS: u64 = 2_000;

/// Reads one key that never exists, so the store's connection (DNS, TCP, TLS) is in the
/// pool before the first invocation. Never fails: a store that does not answer is logged,
/// and the first request connects as it would have.
pub(super) async fn warm_up(store: &dyn Store, now_ms: u64) {
    let read = store.get_one("handoff:warm-up", "connection", now_ms);
    let timeout = std::time::Duration::from_millis(WARM_UP_TIMEOUT_MS);
    match tokio::time::timeout(timeout, read).await {
        Ok(Ok(_)) => startup_mark("store connected"),
        Ok(Err(error)) => tracing::warn!(
            %error,
            "the store's warm-up read failed; the first request connects instead"
        ),
        Err(_) => tracing::warn!(
            timeout_ms = WARM_UP_TIMEOUT_MS,
            "the store's warm-up read did not answer in time; the first request connects instead"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_warm_up_read_never_fails_init() {
        struct Down;
        #[async_trait::async_trait]
        impl Store for Down {
            async fn get(
                &self,
                _: &str,
                _: &[&str],
                _: u64,
            ) -> Result<Vec<Option<handoff_core::Item>>, handoff_core::StoreError> {
                Err(handoff_core::StoreError::Unavailable("down".to_owned()))
            }
            async fn commit(
                &self,
                _: &str,
                _: Vec<handoff_core::store::Write>,
                _: u64,
            ) -> Result<(), handoff_core::StoreError> {
                unreachable!("the warm-up only reads")
            }
            async fn list(
                &self,
                _: &str,
                _: &str,
                _: u64,
            ) -> Result<Vec<String>, handoff_core::StoreError> {
                unreachable!("the warm-up only reads")
            }
        }
        warm_up(&Down, 0).await;
        let memory = handoff_core::store::memory::MemoryStore::new();
        warm_up(&memory, 0).await;
    }
}
