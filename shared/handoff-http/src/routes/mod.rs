//! Route handlers.

pub(crate) mod agent;
pub(crate) mod json_body;
pub(crate) mod superagent;
pub(crate) mod threads;

use agui_protocol::Message;

use crate::AppState;
use crate::body::Encoding;
use crate::error::ApiError;

/// The thread's stored history when `encoding` needs it: A2UI frames name the
/// tools of results whose calls were made in earlier runs. AG-UI never does.
pub(crate) async fn a2ui_history(
    app: &AppState,
    encoding: Encoding,
    thread_id: &str,
) -> Result<Vec<Message>, ApiError> {
    if encoding == Encoding::AgUi {
        return Ok(Vec::new());
    }
    Ok(app
        .engine
        .thread(thread_id)
        .await?
        .map(|t| t.messages)
        .unwrap_or_default())
}
