//! The negative streams: hand-made bytes that break a rule.

use super::*;

/// Every negative case (hand-made bytes).
pub fn negatives() -> Vec<Case> {
    let start =
        json!({"type": "RUN_STARTED", "threadId": T, "runId": "run-1", "protocolVersion": "1.0"});
    let finish = json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": {"type": "success"}});
    let text_start = json!({"type": "TEXT_MESSAGE_START", "messageId": "m1"});
    let text_content = json!({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x"});
    let text_end = json!({"type": "TEXT_MESSAGE_END", "messageId": "m1"});
    let mut cases = vec![
        negative(
            "neg-content-before-start",
            &[start.clone(), text_content.clone(), finish.clone()],
            "CONTENT before START",
        ),
        negative(
            "neg-event-after-finished",
            &[start.clone(), finish.clone(), text_start.clone()],
            "events after RUN_FINISHED",
        ),
        negative(
            "neg-nested-run-started",
            &[start.clone(), start.clone()],
            "RUN_STARTED inside an active run",
        ),
        negative(
            "neg-first-event-not-run-started",
            &[text_start.clone(), text_end.clone()],
            "first event is not RUN_STARTED",
        ),
        negative(
            "neg-metadata-null",
            &[
                start.clone(),
                json!({"type": "STEP_STARTED", "stepName": "s", "metadata": null}),
            ],
            "metadata: null",
        ),
        negative(
            "neg-subagent-null",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "subagentRunId": null}),
            ],
            "subagentRunId: null",
        ),
        negative(
            "neg-fractional-timestamp",
            &[
                start.clone(),
                json!({"type": "STEP_STARTED", "stepName": "s", "timestamp": 1762374498.96628}),
            ],
            "fractional timestamp",
        ),
        negative(
            "neg-empty-interrupts",
            &[
                start.clone(),
                json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": {"type": "interrupt", "interrupts": []}}),
            ],
            "interrupt outcome without interrupts",
        ),
        negative(
            "neg-interrupt-without-reason",
            &[
                start.clone(),
                json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": {"type": "interrupt", "interrupts": [{"id": "i"}]}}),
            ],
            "interrupt without reason",
        ),
        negative(
            "neg-open-text-at-finish",
            &[start.clone(), text_start.clone(), finish.clone()],
            "text message open at RUN_FINISHED",
        ),
        negative(
            "neg-open-tool-at-finish",
            &[
                start.clone(),
                json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "x"}),
                finish.clone(),
            ],
            "tool call open at RUN_FINISHED",
        ),
        negative(
            "neg-args-after-end",
            &[
                start.clone(),
                json!({"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "x"}),
                json!({"type": "TOOL_CALL_END", "toolCallId": "c"}),
                json!({"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"}),
            ],
            "TOOL_CALL_ARGS after END",
        ),
        negative(
            "neg-first-chunk-without-id",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}),
                finish.clone(),
            ],
            "first TEXT_MESSAGE_CHUNK without messageId",
        ),
        negative(
            "neg-chunk-role-conflict",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "delta": "a"}),
                json!({"type": "TEXT_MESSAGE_CHUNK", "messageId": "c", "role": "user", "delta": "b"}),
                finish.clone(),
            ],
            "chunk continuation with a different role",
        ),
        negative(
            "neg-reasoning-content-without-start",
            &[
                start.clone(),
                json!({"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "x"}),
            ],
            "reasoning content without start",
        ),
        negative(
            "neg-step-finished-not-started",
            &[
                start.clone(),
                json!({"type": "STEP_FINISHED", "stepName": "s"}),
            ],
            "STEP_FINISHED without STEP_STARTED",
        ),
        negative(
            "neg-unknown-text-role",
            &[
                start.clone(),
                json!({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "robot"}),
            ],
            "unknown TEXT_MESSAGE_START role (closed enum)",
        ),
        negative(
            "neg-frame-not-object",
            &[start.clone(), json!([1, 2])],
            "an SSE frame that is not a JSON object",
        ),
        negative(
            "neg-frame-without-type",
            &[start.clone(), json!({"messageId": "m1"})],
            "a frame without a type",
        ),
        negative(
            "neg-outcome-array",
            &[
                start.clone(),
                json!({"type": "RUN_FINISHED", "threadId": T, "runId": "run-1", "outcome": [{"type": "success"}]}),
            ],
            "an outcome that is an array",
        ),
        negative(
            "neg-subagent-finish-unknown",
            &[
                start.clone(),
                json!({"type": "SUBAGENT_FINISHED", "subagentRunId": "nope"}),
                finish.clone(),
            ],
            "SUBAGENT_FINISHED for a subagent never started",
        ),
    ];
    let crlf = [start, text_start, text_content, text_end, finish]
        .iter()
        .flat_map(|f| format!("data: {f}\r\n\r\n").into_bytes())
        .collect();
    cases.push(Case {
        name: "neg-crlf-framing",
        bytes: crlf,
        accept: false,
        thread_id: T,
        run_id: "run-1",
        resume: None,
        note: "CRLF framing",
    });
    cases
}
