//! Stage 7, the state the run starts from.

use agui_protocol::RunAgentInput;
use serde_json::Value;

use crate::records::ThreadRecord;

/// A new run starts from the request's state, else the thread's (an empty object for
/// none); a resume continues from the thread's state, whatever the request carries.
pub(crate) fn initial(input: &RunAgentInput, thread: &ThreadRecord, resume: bool) -> Value {
    if resume {
        return thread.state.clone();
    }
    let state = input.state.clone().unwrap_or_else(|| thread.state.clone());
    if state.is_null() {
        Value::Object(Default::default())
    } else {
        state
    }
}

#[cfg(test)]
mod tests {
    use agui_protocol::RunAgentInput;
    use serde_json::json;

    use super::initial;
    use crate::records::ThreadRecord;

    #[test]
    fn a_new_run_takes_the_requests_state_and_a_resume_the_threads() {
        let thread = ThreadRecord {
            state: json!({"stored": 1}),
            ..ThreadRecord::default()
        };
        let mut input = RunAgentInput::new("t", "r1", vec![]);
        assert_eq!(initial(&input, &thread, false), json!({"stored": 1}));
        input.state = Some(json!({"sent": 2}));
        assert_eq!(initial(&input, &thread, false), json!({"sent": 2}));
        assert_eq!(initial(&input, &thread, true), json!({"stored": 1}));
        let empty = ThreadRecord::default();
        input.state = None;
        assert_eq!(
            initial(&input, &empty, false),
            json!({}),
            "null becomes an object"
        );
    }
}
