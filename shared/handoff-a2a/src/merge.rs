//! Merging one notification into a task snapshot: pure, no I/O.
//!
//! **Ordering** (A2A promises none; senders retry and deliver concurrently):
//!
//! - a stored terminal status (completed, failed, canceled, rejected) is never
//!   replaced, not even by another terminal one;
//! - otherwise a status is *older* than the stored one when both carry a
//!   `timestamp` and its timestamp is earlier; when either lacks one, when it
//!   is older by state rank: unspecified < submitted < working = input-required
//!   = auth-required < terminal. Equal rank (or equal timestamps and equal or
//!   higher rank) applies, so the last arrival wins between working and the
//!   interrupted states, the one transition that goes both ways;
//! - older statuses are ignored; artifacts and messages still merge, whatever
//!   the status did.
//!
//! **Artifacts** merge by `artifactId`: `append: true` adds the parts to the
//! stored artifact (creating it if this chunk came first), `append: false`
//! replaces it; `lastChunk: true` marks it complete. A chunk arriving after the
//! last one is still appended (A2A chunks carry no sequence number, so late is
//! indistinguishable from misordered; dropping would lose content). Full task
//! snapshots add the artifacts the receiver lacks, and replace known ones only
//! when their status is accepted as newer.
//!
//! **Messages** (history, `message` notifications) are added once by `messageId`.
//!
//! **Wake**: an accepted status that is terminal or interrupted and differs from
//! the stored one wakes the waiting thread.

use a2a_types::{Message, StreamResponse, TaskArtifactUpdateEvent, TaskState, TaskStatus};
use handoff_core::time_fmt::parse_ms;

use crate::records::{ArtifactProgress, Outcome, TaskSnapshot};

/// The result of [`merge`].
#[derive(Debug, Clone)]
pub(crate) struct Merged {
    pub(crate) snapshot: TaskSnapshot,
    pub(crate) outcome: Outcome,
    /// The snapshot must be written.
    pub(crate) changed: bool,
    /// The status reached a terminal or interrupted state: write a wake record.
    pub(crate) wake: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Apply,
    Same,
    Terminal,
    Stale,
}

fn rank(state: TaskState) -> u8 {
    match state {
        TaskState::Unspecified => 0,
        TaskState::Submitted => 1,
        TaskState::Working | TaskState::InputRequired | TaskState::AuthRequired => 2,
        TaskState::Completed | TaskState::Failed | TaskState::Canceled | TaskState::Rejected => 3,
    }
}

fn decide(stored: &TaskStatus, incoming: &TaskStatus) -> Decision {
    if stored == incoming {
        return Decision::Same;
    }
    if stored.state.is_terminal() {
        return Decision::Terminal;
    }
    let time = |s: &TaskStatus| s.timestamp.as_deref().and_then(parse_ms);
    match (time(stored), time(incoming)) {
        (Some(old), Some(new)) if new < old => Decision::Stale,
        (Some(old), Some(new)) if new > old => Decision::Apply,
        _ if rank(incoming.state) < rank(stored.state) => Decision::Stale,
        _ => Decision::Apply,
    }
}

/// Identifies the notification's context for a new snapshot.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Context<'a> {
    pub(crate) thread_id: &'a str,
    pub(crate) config_id: &'a str,
    pub(crate) task_id: &'a str,
    pub(crate) now_ms: u64,
}

pub(crate) fn merge(
    prev: Option<&TaskSnapshot>,
    event: &StreamResponse,
    cx: Context<'_>,
) -> Merged {
    let mut changed = prev.is_none();
    let mut snap = prev
        .cloned()
        .unwrap_or_else(|| TaskSnapshot::empty(cx.task_id, cx.thread_id, cx.config_id, cx.now_ms));
    let mut decision = None;
    if snap.task.context_id.is_none()
        && let Some(context) = event.context_id()
    {
        snap.task.context_id = Some(context.to_owned());
        changed = true;
    }
    match event {
        StreamResponse::Task(task) => {
            let d = apply_status(&mut snap, &task.status);
            decision = Some(d);
            changed |= d == Decision::Apply;
            if d == Decision::Apply && task.metadata.is_some() {
                snap.task.metadata.clone_from(&task.metadata);
            }
            let terminal = task.status.state.is_terminal();
            for artifact in &task.artifacts {
                let known = snap
                    .task
                    .artifacts
                    .iter()
                    .position(|a| a.artifact_id == artifact.artifact_id);
                match known {
                    None => {
                        snap.task.artifacts.push(artifact.clone());
                        snap.artifact_progress.insert(
                            artifact.artifact_id.clone(),
                            ArtifactProgress {
                                complete: terminal,
                                chunks: 1,
                            },
                        );
                        changed = true;
                    }
                    Some(i) if d == Decision::Apply && snap.task.artifacts[i] != *artifact => {
                        snap.task.artifacts[i] = artifact.clone();
                        let progress = snap
                            .artifact_progress
                            .entry(artifact.artifact_id.clone())
                            .or_default();
                        progress.complete |= terminal;
                        changed = true;
                    }
                    Some(_) => {}
                }
            }
            for message in &task.history {
                changed |= add_message(&mut snap, message);
            }
        }
        StreamResponse::Message(message) => changed |= add_message(&mut snap, message),
        StreamResponse::StatusUpdate(update) => {
            let d = apply_status(&mut snap, &update.status);
            decision = Some(d);
            changed |= d == Decision::Apply;
        }
        StreamResponse::ArtifactUpdate(update) => changed |= merge_artifact(&mut snap, update),
    }
    let wake = decision == Some(Decision::Apply)
        && (snap.task.status.state.is_terminal() || snap.task.status.state.is_interrupted());
    if changed {
        snap.applied += 1;
        snap.updated_at_ms = cx.now_ms;
    }
    if wake {
        snap.wake_seq += 1;
    }
    let outcome = match decision {
        _ if changed => Outcome::Applied,
        Some(Decision::Terminal) => Outcome::IgnoredTerminal,
        Some(Decision::Stale) => Outcome::IgnoredStale,
        _ => Outcome::Unchanged,
    };
    Merged {
        snapshot: snap,
        outcome,
        changed,
        wake,
    }
}

fn apply_status(snap: &mut TaskSnapshot, incoming: &TaskStatus) -> Decision {
    let decision = decide(&snap.task.status, incoming);
    if decision == Decision::Apply {
        snap.task.status = incoming.clone();
    }
    decision
}

fn add_message(snap: &mut TaskSnapshot, message: &Message) -> bool {
    if snap
        .task
        .history
        .iter()
        .any(|m| m.message_id == message.message_id)
    {
        return false;
    }
    snap.task.history.push(message.clone());
    true
}

fn merge_artifact(snap: &mut TaskSnapshot, update: &TaskArtifactUpdateEvent) -> bool {
    let incoming = &update.artifact;
    let progress = snap
        .artifact_progress
        .entry(incoming.artifact_id.clone())
        .or_default();
    let known = snap
        .task
        .artifacts
        .iter_mut()
        .find(|a| a.artifact_id == incoming.artifact_id);
    match known {
        Some(stored) if update.append => {
            stored.parts.extend(incoming.parts.iter().cloned());
            if incoming.name.is_some() {
                stored.name.clone_from(&incoming.name);
            }
            if incoming.description.is_some() {
                stored.description.clone_from(&incoming.description);
            }
            if let Some(metadata) = &incoming.metadata {
                stored
                    .metadata
                    .get_or_insert_with(Default::default)
                    .extend(metadata.clone());
            }
            for extension in &incoming.extensions {
                if !stored.extensions.contains(extension) {
                    stored.extensions.push(extension.clone());
                }
            }
        }
        Some(stored) => {
            if *stored == *incoming && progress.complete == update.last_chunk {
                return false;
            }
            *stored = incoming.clone();
            *progress = ArtifactProgress::default();
        }
        None => snap.task.artifacts.push(incoming.clone()),
    }
    progress.chunks += 1;
    if update.last_chunk {
        progress.complete = true;
    } else if !update.append {
        progress.complete = false;
    }
    true
}

#[cfg(test)]
mod tests {
    use a2a_types::{Artifact, Part, Task};

    use super::*;

    const CX: Context<'static> = Context {
        thread_id: "th",
        config_id: "cfg",
        task_id: "t1",
        now_ms: 1_000,
    };

    fn status(state: TaskState, at: Option<&str>) -> StreamResponse {
        StreamResponse::StatusUpdate(a2a_types::TaskStatusUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            status: TaskStatus {
                state,
                message: None,
                timestamp: at.map(str::to_owned),
            },
            metadata: None,
        })
    }

    fn chunk(id: &str, text: &str, append: bool, last_chunk: bool) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t1".into(),
            context_id: "c1".into(),
            artifact: Artifact::new(id, vec![Part::text(text)]),
            append,
            last_chunk,
            metadata: None,
        })
    }

    fn run(events: &[StreamResponse]) -> (TaskSnapshot, Vec<Outcome>, Vec<bool>) {
        let mut snap = None;
        let mut outcomes = Vec::new();
        let mut wakes = Vec::new();
        for event in events {
            let merged = merge(snap.as_ref(), event, CX);
            outcomes.push(merged.outcome);
            wakes.push(merged.wake);
            snap = Some(merged.snapshot);
        }
        (snap.unwrap(), outcomes, wakes)
    }

    #[test]
    fn terminal_is_never_overwritten() {
        let (snap, outcomes, _) = run(&[
            status(TaskState::Completed, None),
            status(TaskState::Working, Some("2030-01-01T00:00:00Z")),
            status(TaskState::Failed, None),
        ]);
        assert_eq!(snap.task.status.state, TaskState::Completed);
        assert_eq!(
            outcomes,
            [
                Outcome::Applied,
                Outcome::IgnoredTerminal,
                Outcome::IgnoredTerminal
            ]
        );
    }

    #[test]
    fn older_timestamps_and_lower_ranks_are_stale() {
        let (snap, outcomes, _) = run(&[
            status(TaskState::Working, Some("2026-11-29T13:01:00Z")),
            status(TaskState::Submitted, Some("2026-11-29T13:00:00Z")),
            status(TaskState::InputRequired, Some("2026-11-29T13:00:30Z")),
        ]);
        assert_eq!(snap.task.status.state, TaskState::Working);
        assert_eq!(
            outcomes,
            [
                Outcome::Applied,
                Outcome::IgnoredStale,
                Outcome::IgnoredStale
            ]
        );
        let (snap, outcomes, _) = run(&[
            status(TaskState::Working, None),
            status(TaskState::Submitted, None),
        ]);
        assert_eq!(snap.task.status.state, TaskState::Working);
        assert_eq!(outcomes[1], Outcome::IgnoredStale);
    }

    #[test]
    fn interrupted_and_working_alternate_and_wake() {
        let (snap, outcomes, wakes) = run(&[
            status(TaskState::Working, Some("2026-11-29T13:01:00Z")),
            status(TaskState::InputRequired, Some("2026-11-29T13:02:00Z")),
            status(TaskState::Working, Some("2026-11-29T13:03:00Z")),
            status(TaskState::AuthRequired, Some("2026-11-29T13:04:00Z")),
            status(TaskState::AuthRequired, Some("2026-11-29T13:04:00Z")),
            status(TaskState::Completed, Some("2026-11-29T13:05:00Z")),
        ]);
        assert_eq!(snap.task.status.state, TaskState::Completed);
        assert_eq!(wakes, [false, true, false, true, false, true]);
        assert_eq!(outcomes[4], Outcome::Unchanged);
        assert_eq!(snap.wake_seq, 3);
    }

    #[test]
    fn artifacts_append_replace_and_complete() {
        let (snap, _, _) = run(&[
            chunk("a", "one ", false, false),
            chunk("a", "two", true, false),
            chunk("b", "x", false, true),
            chunk("a", " three", true, true),
        ]);
        let a = &snap.task.artifacts[0];
        let text: Vec<_> = a.parts.iter().filter_map(Part::as_text).collect();
        assert_eq!(text, ["one ", "two", " three"]);
        assert!(snap.artifact_progress["a"].complete);
        assert_eq!(snap.artifact_progress["a"].chunks, 3);
        assert!(snap.artifacts_complete());
        let (snap, outcomes, _) = run(&[
            chunk("a", "one", true, false),
            chunk("a", "fresh", false, false),
            chunk("a", "fresh", false, false),
        ]);
        assert_eq!(snap.task.artifacts[0].parts, [Part::text("fresh")]);
        assert!(!snap.artifacts_complete());
        assert_eq!(outcomes[2], Outcome::Unchanged);
    }

    #[test]
    fn task_snapshots_merge_without_losing_newer_data() {
        let mut newer = Task::new("t1", TaskStatus::new(TaskState::Working));
        newer.status.timestamp = Some("2026-11-29T13:02:00Z".into());
        newer.artifacts = vec![Artifact::new("a", vec![Part::text("new")])];
        let mut older = Task::new("t1", TaskStatus::new(TaskState::Submitted));
        older.status.timestamp = Some("2026-11-29T13:00:00Z".into());
        older.artifacts = vec![
            Artifact::new("a", vec![Part::text("old")]),
            Artifact::new("b", vec![Part::text("only-old")]),
        ];
        older.history = vec![Message::new("m1", a2a_types::Role::User, vec![])];
        let (snap, outcomes, _) = run(&[
            StreamResponse::Task(newer),
            StreamResponse::Task(older.clone()),
            StreamResponse::Task(older),
        ]);
        assert_eq!(snap.task.status.state, TaskState::Working);
        assert_eq!(snap.task.artifacts[0].parts, [Part::text("new")]);
        assert_eq!(snap.task.artifacts.len(), 2);
        assert_eq!(snap.task.history.len(), 1);
        assert_eq!(
            outcomes,
            [Outcome::Applied, Outcome::Applied, Outcome::IgnoredStale]
        );
    }
}
