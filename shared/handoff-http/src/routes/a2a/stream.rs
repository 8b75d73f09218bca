//! A run's AG-UI events as A2A stream responses, as they happen.
//!
//! The stream opens with the task (or, for an agent that answers with a message, that
//! message alone), then a `working` status, an artifact update per finished output, and a
//! final status update when the run ends. Events after a direct message are read to the end
//! and not sent: on a host without a background spawner, reading is what drives the run.

use std::sync::Arc;

use a2a_types::{
    StreamResponse, Task, TaskArtifactUpdateEvent, TaskState, TaskStatus, TaskStatusUpdateEvent,
};
use agui_protocol::Event;
use futures::stream::{BoxStream, StreamExt};
use handoff_core::time_fmt::format_ms;

use super::fold::{Folded, MESSAGE_EVENT, agent_message};

/// The ids a stream's responses carry.
#[derive(Clone)]
pub(crate) struct TaskIds {
    pub task_id: String,
    pub context_id: String,
}

struct Mapper {
    ids: TaskIds,
    opening: Option<Task>,
    folded: Folded,
    replied: bool,
    now: Arc<dyn Fn() -> u64 + Send + Sync>,
}

impl Mapper {
    fn status(&self, state: TaskState, folded: &Folded) -> StreamResponse {
        let message = (!folded.status_parts.is_empty()).then(|| {
            agent_message(
                format!("status-{}-{}", self.ids.task_id, (self.now)()),
                &self.ids.task_id,
                &self.ids.context_id,
                folded.status_parts.clone(),
            )
        });
        StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: self.ids.task_id.clone(),
            context_id: self.ids.context_id.clone(),
            status: TaskStatus {
                state,
                message,
                timestamp: Some(format_ms((self.now)())),
            },
            metadata: None,
        })
    }

    fn map(&mut self, event: &Event) -> Vec<StreamResponse> {
        if self.replied {
            return Vec::new();
        }
        let mut out = Vec::new();
        if self.opening.is_some() {
            // Held until the run shows whether it answers with a task or a message.
            let direct = matches!(event, Event::Custom(c) if c.name == MESSAGE_EVENT);
            let quiet = matches!(
                event,
                Event::RunStarted(_) | Event::StateSnapshot(_) | Event::MessagesSnapshot(_)
            );
            if direct || quiet {
                self.folded.push(event);
            }
            if let Some(mut message) = self.folded.reply.take() {
                message.context_id = Some(self.ids.context_id.clone());
                self.replied = true;
                return vec![StreamResponse::Message(message)];
            }
            if quiet {
                return out;
            }
            if let Some(task) = self.opening.take() {
                out.push(StreamResponse::Task(task));
            }
            out.push(self.status(TaskState::Working, &Folded::default()));
        } else if matches!(event, Event::RunStarted(_)) {
            self.folded.push(event);
            return vec![self.status(TaskState::Working, &Folded::default())];
        }
        if let Some(artifact) = self.folded.push(event) {
            out.push(self.artifact_update(artifact));
        }
        if let Some(state) = self.folded.state.filter(|_| is_terminal_event(event)) {
            let state_artifact = self.folded.all_artifacts().pop();
            if let Some(artifact) = state_artifact.filter(|a| a.artifact_id == "state") {
                out.push(self.artifact_update(artifact));
            }
            out.push(self.status(state, &self.folded));
        }
        out
    }

    fn artifact_update(&self, artifact: a2a_types::Artifact) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: self.ids.task_id.clone(),
            context_id: self.ids.context_id.clone(),
            artifact,
            append: false,
            last_chunk: true,
            metadata: None,
        })
    }
}

fn is_terminal_event(event: &Event) -> bool {
    matches!(event, Event::RunFinished(_) | Event::RunError(_))
}

/// `events` (one run's) as stream responses. `opening` is the task to open with; `None`
/// for a stream that already sent one (a subscription sends the task it read first).
pub(crate) fn responses<E>(
    ids: TaskIds,
    opening: Option<Task>,
    events: BoxStream<'static, E>,
    now: Arc<dyn Fn() -> u64 + Send + Sync>,
) -> BoxStream<'static, StreamResponse>
where
    E: std::borrow::Borrow<Event> + Send + 'static,
{
    let mut mapper = Mapper {
        ids,
        opening,
        folded: Folded::default(),
        replied: false,
        now,
    };
    events
        .flat_map(move |event| futures::stream::iter(mapper.map(event.borrow())))
        .boxed()
}
