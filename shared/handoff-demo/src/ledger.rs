//! A simulated payment ledger kept in the engine's store.
//!
//! It behaves as a payment API does: a refund repeated under an idempotency key it has
//! seen moves no money and answers as the first did, and a refund beyond what the order
//! paid is refused. It records **every** call's key (repeats included) in
//! `idempotencyKeys`, so how often the engine called it can be observed from outside
//! through `GET /demo/orders/{orderId}`.

use std::sync::Arc;

use handoff_core::{Condition, CoreError, EffectFailure, Store, StoreError, Write};
use serde::{Deserialize, Serialize};

use crate::Order;

const ACCOUNT_KEY: &str = "account";

/// An account expires this long after its last change: as long as the engine keeps the
/// effect records that make its refunds exactly once ([`handoff_core::EngineConfig::effect_ttl_ms`]'s
/// default), after which a replayed resume could refund again anyway. Demo data, so it is
/// not kept forever: a memory store's budget may drop it like a thread's records.
pub const ACCOUNT_TTL_MS: u64 = 30 * 24 * 60 * 60 * 1000;

/// What the ledger knows about one order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderAccount {
    /// Order id.
    pub order_id: String,
    /// Refund calls executed.
    pub refunds: u64,
    /// Sum refunded, in cents.
    pub refunded_cents: u64,
    /// Returns recorded.
    pub returns: u64,
    /// Return reasons, in order.
    pub return_reasons: Vec<String>,
    /// Idempotency keys received, in order (repeats included).
    pub idempotency_keys: Vec<String>,
}

/// Why a refund failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum RefundError {
    /// More than the order has left to refund; nothing moved.
    #[error(
        "refunding {cents} cents of order {order_id} exceeds the {remaining} cents it has left to refund"
    )]
    Exceeds {
        /// The order.
        order_id: String,
        /// Asked for.
        cents: u64,
        /// Still refundable.
        remaining: u64,
    },
    /// The ledger's store failed; the refund may or may not have been written.
    #[error(transparent)]
    Store(#[from] CoreError),
}

impl EffectFailure for RefundError {
    fn not_executed(&self) -> bool {
        matches!(self, RefundError::Exceeds { .. })
    }
}

/// The ledger over a store.
#[derive(Clone)]
pub struct Ledger {
    store: Arc<dyn Store>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger").finish_non_exhaustive()
    }
}

fn partition(order_id: &str) -> String {
    format!("ledger#{order_id}")
}

impl Ledger {
    /// A ledger in `store`.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Ledger { store }
    }

    /// The account of an order (empty if never touched).
    pub async fn account(&self, order_id: &str, now_ms: u64) -> Result<OrderAccount, CoreError> {
        match self
            .store
            .get_one(&partition(order_id), ACCOUNT_KEY, now_ms)
            .await?
        {
            Some(item) => serde_json::from_slice(&item.value)
                .map_err(|e| CoreError::CorruptRecord(e.to_string())),
            None => Ok(OrderAccount {
                order_id: order_id.to_owned(),
                ..OrderAccount::default()
            }),
        }
    }

    /// Executes a refund of `cents`, once per idempotency key: a repeated key moves no
    /// money (every call's key is still recorded). Refused, moving nothing, when the
    /// order's refunds would exceed what it paid.
    pub async fn refund(
        &self,
        order_id: &str,
        cents: u64,
        idempotency_key: &str,
        now_ms: u64,
    ) -> Result<OrderAccount, RefundError> {
        let paid = Order::lookup(order_id).amount_cents;
        let mut exceeded = None;
        let account = self
            .update(order_id, now_ms, |account| {
                let repeat = account
                    .idempotency_keys
                    .iter()
                    .any(|k| k == idempotency_key);
                let remaining = paid.saturating_sub(account.refunded_cents);
                exceeded = (!repeat && cents > remaining).then_some(remaining);
                if exceeded.is_some() {
                    return false;
                }
                if !repeat {
                    account.refunds += 1;
                    account.refunded_cents += cents;
                }
                account.idempotency_keys.push(idempotency_key.to_owned());
                true
            })
            .await?;
        match exceeded {
            Some(remaining) => Err(RefundError::Exceeds {
                order_id: order_id.to_owned(),
                cents,
                remaining,
            }),
            None => Ok(account),
        }
    }

    /// What `order_id` may still refund, in cents.
    pub async fn refundable(&self, order_id: &str, now_ms: u64) -> Result<u64, CoreError> {
        let account = self.account(order_id, now_ms).await?;
        Ok(Order::lookup(order_id)
            .amount_cents
            .saturating_sub(account.refunded_cents))
    }

    /// Records a return with its reason. Every call counts.
    pub async fn record_return(
        &self,
        order_id: &str,
        reason: &str,
        idempotency_key: &str,
        now_ms: u64,
    ) -> Result<OrderAccount, CoreError> {
        self.update(order_id, now_ms, |account| {
            account.returns += 1;
            account.return_reasons.push(reason.to_owned());
            account.idempotency_keys.push(idempotency_key.to_owned());
            true
        })
        .await
    }

    /// Read-modify-write with compare-and-set, retried on contention; `change` returns
    /// `false` to write nothing (the account is answered as read).
    async fn update(
        &self,
        order_id: &str,
        now_ms: u64,
        mut change: impl FnMut(&mut OrderAccount) -> bool,
    ) -> Result<OrderAccount, CoreError> {
        let partition = partition(order_id);
        for _ in 0..32 {
            let (mut account, condition) =
                match self.store.get_one(&partition, ACCOUNT_KEY, now_ms).await? {
                    Some(item) => (
                        serde_json::from_slice(&item.value)
                            .map_err(|e| CoreError::CorruptRecord(e.to_string()))?,
                        Condition::Version(item.version),
                    ),
                    None => (
                        OrderAccount {
                            order_id: order_id.to_owned(),
                            ..OrderAccount::default()
                        },
                        Condition::Absent,
                    ),
                };
            if !change(&mut account) {
                return Ok(account);
            }
            let value = serde_json::to_vec(&account)
                .map_err(|e| CoreError::CorruptRecord(e.to_string()))?;
            match self
                .store
                .commit(
                    &partition,
                    vec![Write::put(
                        ACCOUNT_KEY,
                        condition,
                        value,
                        Some(now_ms + ACCOUNT_TTL_MS),
                    )],
                    now_ms,
                )
                .await
            {
                Ok(()) => return Ok(account),
                Err(StoreError::ConditionFailed { .. }) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Err(CoreError::Store(StoreError::Unavailable(
            "ledger contention".to_owned(),
        )))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use handoff_core::store::memory::MemoryStore;

    use super::{ACCOUNT_TTL_MS, Ledger, RefundError};

    #[test]
    fn an_account_is_kept_for_the_effect_records_lifetime_after_its_last_change() {
        futures::executor::block_on(async {
            let ledger = Ledger::new(Arc::new(MemoryStore::default()));
            ledger.refund("A1", 500, "key-1", 1_000).await.unwrap();
            let later = 1_000 + ACCOUNT_TTL_MS / 2;
            ledger.refund("A1", 200, "key-2", later).await.unwrap();
            // The second change renewed the expiry: still there after the first one's.
            let kept = ledger.account("A1", 1_000 + ACCOUNT_TTL_MS).await.unwrap();
            assert_eq!((kept.refunds, kept.refunded_cents), (2, 700));
            let gone = ledger.account("A1", later + ACCOUNT_TTL_MS).await.unwrap();
            assert_eq!((gone.refunds, gone.order_id.as_str()), (0, "A1"));
        });
    }

    #[test]
    fn a_repeated_key_moves_no_money_and_refunds_stop_at_what_was_paid() {
        futures::executor::block_on(async {
            let ledger = Ledger::new(Arc::new(MemoryStore::default()));
            let paid = crate::Order::lookup("A1").amount_cents;
            ledger
                .refund("A1", paid - 10, "key-1", 1_000)
                .await
                .unwrap();
            let again = ledger
                .refund("A1", paid - 10, "key-1", 1_000)
                .await
                .unwrap();
            assert_eq!((again.refunds, again.refunded_cents), (1, paid - 10));
            assert_eq!(
                again.idempotency_keys,
                ["key-1", "key-1"],
                "every call is seen"
            );
            let err = ledger.refund("A1", 11, "key-2", 1_000).await.unwrap_err();
            assert!(
                matches!(err, RefundError::Exceeds { remaining: 10, .. }),
                "{err}"
            );
            assert!(handoff_core::EffectFailure::not_executed(&err));
            let account = ledger.account("A1", 1_000).await.unwrap();
            assert_eq!(account.refunded_cents, paid - 10, "nothing moved");
            assert_eq!(ledger.refundable("A1", 1_000).await.unwrap(), 10);
            ledger.refund("A1", 10, "key-3", 1_000).await.unwrap();
            assert_eq!(ledger.refundable("A1", 1_000).await.unwrap(), 0);
        });
    }
}
