//! A deterministic corpus of AG-UI events for the SSE encoder benchmark and the
//! byte-identity check against the official `@ag-ui/encoder` (issue 16).
//!
//! The mix: 60 % text deltas (some CJK, emoji and characters JSON must escape),
//! 15 % tool-call argument fragments, 10 % state deltas (JSON Patch), 5 % state
//! snapshots of about 2 KB, 10 % other events (run, message, tool and step
//! lifecycle, tool results, custom events). Enabled by the `bench-corpus` feature;
//! not part of the supported API.
//!
//! Numbers are integers or fractions that print the same in Rust and JavaScript
//! (`serde_json` prints `1.0` where `JSON.stringify` prints `1`), and object keys are
//! never integer-like (JavaScript objects enumerate those first).

use serde_json::{Map, Value, json};

use crate::event::{
    Custom, RunFinished, RunStarted, StateDelta, StateSnapshot, StepFinished, StepStarted,
    TextMessageContent, TextMessageEnd, TextMessageStart, TextRole, ToolCallArgs, ToolCallEnd,
    ToolCallResult, ToolCallStart,
};
use crate::{Event, PatchOp, RunFinishedOutcome};

/// The corpus size the numbers refer to.
pub const DEFAULT_LEN: usize = 100_000;

/// The issue-16 mix: `len` events from a fixed seed (same input, same corpus).
pub fn mix(len: usize) -> Vec<Event> {
    mix_seeded(len, 0x9E37_79B9_7F4A_7C15)
}

/// The mix from an explicit seed.
pub fn mix_seeded(len: usize, seed: u64) -> Vec<Event> {
    let mut g = Gen {
        rng: XorShift(seed | 1),
        turn: 0,
    };
    (0..len).map(|i| g.event(i)).collect()
}

/// xorshift64: tiny, deterministic, good enough for picking words.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "the ",
    "order ",
    "refund ",
    "was ",
    "shipped ",
    "on ",
    "Tuesday",
    ", ",
    "and ",
    "your ",
    "account ",
    "balance ",
    "is ",
    "now ",
    "€42.50",
    ". ",
    "I ",
    "can ",
    "help ",
    "with ",
    "that",
    "!",
    "? ",
    "tracking ",
    "number ",
    "#A-1093 ",
    "please ",
    "confirm ",
    "café ",
];
const CJK: &[&str] = &[
    "你好",
    "，",
    "订单",
    "已发货",
    "。",
    "退款",
    "处理中",
    "こんにちは",
    "注文",
    "を確認しました",
    "주문",
    "환불",
    "🚀",
    "✅ ",
];
const ESCAPES: &[&str] = &[
    "\"quoted\" ",
    "\n",
    "\n\n",
    "C:\\Users\\ada ",
    "\t",
    "line\r\n",
    "\u{1}",
    "\u{1f}",
    "\u{2028}",
    "</script>",
    "\u{7f}",
];
const OTHER: &[&str] = &[
    "run_started",
    "message_start",
    "message_end",
    "tool_start",
    "tool_end",
    "tool_result",
    "step_started",
    "step_finished",
    "custom",
    "run_finished",
];

struct Gen {
    rng: XorShift,
    turn: u64,
}

impl Gen {
    fn event(&mut self, i: usize) -> Event {
        let roll = self.rng.below(100);
        let event: Event = match roll {
            0..60 => TextMessageContent::new(self.message_id(), self.text()).into(),
            60..75 => ToolCallArgs::new(self.call_id(), self.args_fragment()).into(),
            75..85 => StateDelta::new(self.patch()).into(),
            85..90 => StateSnapshot::new(self.snapshot()).into(),
            _ => self.other(),
        };
        // Servers usually stamp events; some do not.
        if i.is_multiple_of(3) {
            event
        } else {
            event.with_timestamp(1_764_421_200_000 + i as u64)
        }
    }

    fn message_id(&self) -> String {
        format!("msg_{:04}", self.turn)
    }

    fn call_id(&self) -> String {
        format!("call_{:04}", self.turn)
    }

    fn text(&mut self) -> String {
        let words = 1 + self.rng.below(6);
        let mut s = String::new();
        for _ in 0..words {
            let word = match self.rng.below(20) {
                0..3 => self.rng.pick(CJK),
                3 => self.rng.pick(ESCAPES),
                _ => self.rng.pick(WORDS),
            };
            s.push_str(word);
        }
        s
    }

    fn args_fragment(&mut self) -> String {
        let n = self.rng.below(10_000);
        match self.rng.below(6) {
            0 => "{\"query\": \"".to_owned(),
            1 => format!("order #{n} status"),
            2 => "\", \"limit\": ".to_owned(),
            3 => format!("{}, \"filters\": {{\"region\": \"eu\", ", n % 50),
            4 => "\"note\": \"line one\\nline two\"".to_owned(),
            _ => "}".to_owned(),
        }
    }

    fn patch(&mut self) -> Vec<PatchOp> {
        let n = self.rng.below(1_000);
        let mut ops = vec![PatchOp::replace("/progress", json!(n as f64 + 0.5))];
        match self.rng.below(4) {
            0 => ops.push(PatchOp::add(
                "/log/-",
                json!({"turn": self.turn, "note": self.text(), "ok": true}),
            )),
            1 => ops.push(PatchOp::remove(format!("/items/{}", n % 12))),
            2 => ops.push(PatchOp::add(
                format!("/items/{}/status", n % 12),
                json!("shipped"),
            )),
            _ => {}
        }
        ops
    }

    fn snapshot(&mut self) -> Value {
        let items: Vec<Value> = (0..13)
            .map(|k| {
                let cents = self.rng.below(100_000);
                json!({
                    "sku": format!("SKU-{:05}", self.rng.below(100_000)),
                    "title": self.text(),
                    "price": cents as f64 / 100.0 + 0.005,
                    "quantity": 1 + k % 4,
                    "tags": ["eu", "express"],
                    "inStock": cents.is_multiple_of(2),
                    "discount": null,
                })
            })
            .collect();
        let mut state = Map::new();
        state.insert("turn".into(), json!(self.turn));
        state.insert(
            "user".into(),
            json!({"name": "Ada Lovelace", "plan": "pro", "locale": "zh-CN"}),
        );
        state.insert("items".into(), Value::Array(items));
        state.insert("total".into(), json!(-1_234_567));
        state.insert("notes".into(), json!(self.text()));
        Value::Object(state)
    }

    fn other(&mut self) -> Event {
        let kind = self.rng.pick(OTHER);
        let (msg, call) = (self.message_id(), self.call_id());
        match kind {
            "run_started" => RunStarted::new("thread_1", format!("run_{}", self.turn)).into(),
            "message_start" => {
                self.turn += 1;
                let mut e = TextMessageStart::new(self.message_id());
                e.role = Some(TextRole::Assistant);
                e.into()
            }
            "message_end" => TextMessageEnd::new(msg).into(),
            "tool_start" => {
                let mut e = ToolCallStart::new(call, "lookup_order");
                e.parent_message_id = Some(msg.into());
                e.into()
            }
            "tool_end" => ToolCallEnd::new(call).into(),
            "tool_result" => {
                ToolCallResult::new(format!("res_{}", self.turn), call, self.text()).into()
            }
            "step_started" => StepStarted::new("planning").into(),
            "step_finished" => StepFinished::new("planning").into(),
            "custom" => Custom::new("acme.progress", json!({"pct": self.rng.below(100)})).into(),
            _ => {
                let mut e = RunFinished::new("thread_1", format!("run_{}", self.turn));
                e.outcome = Some(RunFinishedOutcome::success());
                e.into()
            }
        }
    }
}
