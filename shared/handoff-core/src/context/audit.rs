//! The run's end of the audit trail ([`crate::records::audit`]): entries for the answers
//! it applies and the effects it attempts or replays, chained after the thread's head and
//! written in the commits that record them. Every such commit is fenced by the run's lease, so
//! the head read once stays the head for the whole run.

use agui_protocol::ResumeStatus;

use super::RunContext;
use crate::decision::Decision;
use crate::error::CoreError;
use crate::records::audit::{
    AUDIT_HEAD_KEY, AUDIT_RETENTION_MS, AuditEntry, AuditHead, AuditKind, audit_entry_key,
    audit_scope, payload_hash,
};
use crate::records::{decode, encode};
use crate::store::{Condition, IndexEntry, Item, Write};

/// The chain's head as this run knows it: `None` until read; then its version (0: no
/// chain yet) and contents.
#[derive(Debug, Default)]
pub(crate) struct AuditCursor {
    head: Option<(u64, Option<AuditHead>)>,
    replayed: Vec<AuditEntry>,
}

/// The head a run starts from, from the audit head item as read (`None` when it cannot be
/// decoded: the run then reads it itself, and fails there as before).
pub(crate) fn audit_head_read(item: Option<&Item>) -> Option<(u64, Option<AuditHead>)> {
    match item {
        None => Some((0, None)),
        Some(item) => decode::<AuditHead>(item)
            .ok()
            .map(|head| (item.version, Some(head))),
    }
}

/// The writes that append entries, and the head they leave (applied once committed).
pub(crate) struct AuditAppend {
    pub(crate) writes: Vec<Write>,
    head: (u64, Option<AuditHead>),
}

impl RunContext {
    /// The entry for an applied answer.
    pub(crate) fn answer_entry(&self, decision: &Decision, now_ms: u64) -> AuditEntry {
        let mut entry = self.blank_entry(AuditKind::Answer, now_ms);
        entry.interrupt_id = Some(decision.id().to_string());
        entry.decision = Some(decision_name(decision).to_owned());
        entry.payload_hash = decision.payload.as_ref().map(payload_hash);
        entry.roles = self.roles_used(decision);
        entry
    }

    /// The entry for attempt `attempt` at effect `key`, handed `idempotency_key`.
    pub(crate) fn effect_attempt_entry(
        &self,
        key: &str,
        idempotency_key: String,
        attempt: u32,
        now_ms: u64,
    ) -> AuditEntry {
        let mut entry = self.effect_entry(key, false, now_ms);
        entry.idempotency_key = Some(idempotency_key);
        entry.attempt = Some(attempt);
        entry
    }

    /// The entry for an effect attempted (or replayed) by this run: tied to the run's
    /// answer when it applies exactly one.
    pub(crate) fn effect_entry(&self, key: &str, replayed: bool, now_ms: u64) -> AuditEntry {
        let mut entry = self.blank_entry(AuditKind::Effect, now_ms);
        entry.effect_key = Some(key.to_owned());
        entry.replayed = Some(replayed);
        if let [decision] = self.decisions.as_slice() {
            entry.interrupt_id = Some(decision.id().to_string());
            entry.decision = Some(decision_name(decision).to_owned());
            entry.roles = self.roles_used(decision);
        }
        entry
    }

    fn blank_entry(&self, kind: AuditKind, now_ms: u64) -> AuditEntry {
        AuditEntry {
            seq: 0,
            time_ms: now_ms,
            thread_id: self.input.thread_id.to_string(),
            kind,
            principal: self.principal.subject.clone(),
            roles: Vec::new(),
            interrupt_id: None,
            decision: None,
            payload_hash: None,
            run_id: self.input.run_id.to_string(),
            effect_key: None,
            replayed: None,
            idempotency_key: None,
            attempt: None,
            prev_hash: String::new(),
            hash: String::new(),
        }
    }

    /// The roles the principal holds that the interrupt's approval policy requires.
    fn roles_used(&self, decision: &Decision) -> Vec<String> {
        let roles = decision.approval.as_ref().map(|p| p.roles.clone());
        roles
            .unwrap_or_default()
            .into_iter()
            .filter(|role| self.principal.has_role(role))
            .collect()
    }

    /// The writes that chain `entries` after the thread's head (read on first use).
    pub(crate) async fn audit_append(
        &self,
        entries: Vec<AuditEntry>,
    ) -> Result<AuditAppend, CoreError> {
        let (mut version, mut head) = match self.audit.head.clone() {
            Some(known) => known,
            None => {
                let now = self.now_ms();
                match self
                    .store
                    .get_one(&self.partition, AUDIT_HEAD_KEY, now)
                    .await?
                {
                    Some(item) => (item.version, Some(decode::<AuditHead>(&item)?)),
                    None => (0, None),
                }
            }
        };
        let scope = audit_scope(&self.principal.tenant);
        let kept_until = Some(self.now_ms().saturating_add(AUDIT_RETENTION_MS));
        let mut writes = Vec::with_capacity(entries.len() + 1);
        for entry in entries {
            let entry = entry.seal_after(head.as_ref());
            let index = IndexEntry {
                scope: scope.clone(),
                rank: entry.time_ms,
            };
            writes.push(
                Write::put(
                    audit_entry_key(entry.seq),
                    Condition::Absent,
                    encode(&entry),
                    kept_until,
                )
                .indexed(index),
            );
            head = Some(AuditHead {
                seq: entry.seq,
                hash: entry.hash,
            });
        }
        if let Some(new_head) = &head
            && !writes.is_empty()
        {
            let condition = match version {
                0 => Condition::Absent,
                v => Condition::Version(v),
            };
            writes.push(Write::put(
                AUDIT_HEAD_KEY,
                condition,
                encode(new_head),
                kept_until,
            ));
            version += 1;
        }
        Ok(AuditAppend {
            writes,
            head: (version, head),
        })
    }

    /// The chain's head as read with the claim: every later append of this run (which holds
    /// the thread, so no one else appends) builds on it without reading it again.
    pub(crate) fn knows_audit_head(&mut self, head: (u64, Option<AuditHead>)) {
        self.audit.head = Some(head);
    }

    /// Records that an append's commit landed.
    pub(crate) fn audit_committed(&mut self, append_head: AuditAppend) {
        self.audit.head = Some(append_head.head);
    }

    /// Entries the finish writes: the applied answers, then the effects this run found
    /// already executed (replays write no effect record of their own).
    pub(crate) fn finish_entries(&self, now_ms: u64) -> Vec<AuditEntry> {
        let mut entries: Vec<AuditEntry> = self
            .decisions
            .iter()
            .map(|d| self.answer_entry(d, now_ms))
            .collect();
        entries.extend(self.audit.replayed.iter().cloned());
        entries
    }

    /// Whether this run applies answers (only then are its effects audited).
    pub(crate) fn audits_effects(&self) -> bool {
        !self.decisions.is_empty()
    }

    /// Notes an effect whose recorded result this run reused.
    pub(crate) fn note_replayed_effect(&mut self, key: &str) {
        let now = self.now_ms();
        let entry = self.effect_entry(key, true, now);
        self.audit.replayed.push(entry);
    }
}

fn decision_name(decision: &Decision) -> &'static str {
    match decision.status {
        ResumeStatus::Cancelled => "cancelled",
        _ if decision.approved() => "approved",
        _ if decision.field("approved") == Some(&serde_json::Value::Bool(false)) => "denied",
        ResumeStatus::Resolved => "resolved",
    }
}
