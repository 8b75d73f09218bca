//! Following a run from another instance: the running instance journals its events
//! every `live_flush_ms`; a reader that (re)connects with the id of the last frame it
//! has gets the join prelude, the journal, then the rest as it comes, up to the end.

mod support;

use agui_protocol::Event;
use agui_protocol::span::rejoin;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::{Engine, EngineConfig, FrameStream, Principal};
use support::*;

const FLUSH: u64 = 250;

fn open_blocking(gate: &Gate) -> Blocking {
    Blocking {
        leave_open: true,
        ..Blocking::new(gate.clone())
    }
}

async fn follow(engine: &Engine, run_id: &str, last_id: u64) -> FrameStream {
    engine
        .follow_run(&Principal::anonymous(), "t", run_id, last_id)
        .await
        .expect("follow")
        .expect("the run exists")
}

fn numbered(events: &[Event]) -> Vec<(u64, Event)> {
    rejoin(events, 0)
}

#[test]
fn a_reader_on_another_instance_gets_the_journal_then_the_rest_of_the_run() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::new(open_blocking(&gate));
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut live = until_blocked(&mut stream);
        let first_batch = format!("live#r1@{T0}#000000");
        assert!(
            h.item("t", &first_batch).await.is_none(),
            "journaled at once"
        );

        // The running instance journals what it streamed so far, once per interval.
        h.advance(FLUSH);
        h.sleep.fire();
        let (more, _) = drain_ready(&mut stream);
        live.extend(more);
        assert!(h.item("t", &first_batch).await.is_some(), "not journaled");
        h.sleep.fire();
        let (more, _) = drain_ready(&mut stream);
        assert!(more.is_empty());
        let second_batch = format!("live#r1@{T0}#000001");
        assert!(
            h.item("t", &second_batch).await.is_none(),
            "nothing new, yet written"
        );

        let other = h.instance(Chatty, "b");
        let mut reader = follow(&other, "r1", 0).await;
        let (mut got, ended) = drain_ready(&mut reader);
        assert!(!ended);
        assert_eq!(got, numbered(&live), "the reader did not get the journal");

        // The run goes on and finishes; the reader's next poll finds the final record.
        gate.open();
        live.extend(stream.collect::<Vec<_>>().await);
        h.sleep.fire();
        got.extend(reader.collect::<Vec<_>>().await);
        assert_eq!(got, numbered(&live), "the reader's stream is not the run's");
        assert_valid_stream(&live, &input);
    });
}

#[test]
fn a_reader_that_had_some_frames_gets_the_prelude_then_what_it_missed() {
    block_on(async {
        let gate = Gate::new();
        let h = Harness::new(open_blocking(&gate));
        let input = user_input("t", "r1", "long job");
        let mut stream = h.stream(&input).await;
        let mut live = until_blocked(&mut stream);
        h.advance(FLUSH);
        h.sleep.fire();
        let _ = drain_ready(&mut stream);
        // The client had the first three frames (RUN_STARTED, TEXT_MESSAGE_START, a delta).
        let mut reader = follow(&h.instance(Chatty, "b"), "r1", 3).await;
        let (got, _) = drain_ready(&mut reader);
        assert_eq!(got, rejoin(&live, 3));
        assert_eq!(got[0].0, 1, "RUN_STARTED leads the prelude");
        gate.open();
        live.extend(stream.collect::<Vec<_>>().await);
        h.sleep.fire();
        let rest: Vec<(u64, Event)> = reader.collect().await;
        let last = got.last().map(|(id, _)| *id).unwrap();
        let expected: Vec<(u64, Event)> = numbered(&live)
            .into_iter()
            .filter(|(id, _)| *id > last)
            .collect();
        assert_eq!(rest, expected);
    });
}

#[test]
fn a_finished_run_is_rejoined_from_its_record_at_once() {
    block_on(async {
        let h = Harness::new(Chatty);
        let live = h.run(&user_input("t", "r1", "hello there")).await;
        let reader = follow(&h.engine, "r1", 2).await;
        let got: Vec<(u64, Event)> = reader.collect().await;
        assert_eq!(got, rejoin(&live, 2));
    });
}

#[test]
fn a_reader_of_a_run_whose_instance_died_is_told_so() {
    block_on(async {
        let h = Harness::new(open_blocking(&Gate::new()));
        let mut stream = h.stream(&user_input("t", "r1", "long job")).await;
        until_blocked(&mut stream);
        h.advance(FLUSH);
        h.sleep.fire();
        let _ = drain_ready(&mut stream);
        // The process dies mid-run (no spawner here: dropping the stream drops the run).
        drop(stream);
        h.advance(EngineConfig::default().lease_ms + 1);
        let reader = follow(&h.instance(Chatty, "b"), "r1", 0).await;
        let got: Vec<(u64, Event)> = reader.collect().await;
        match &got.last().expect("frames").1 {
            Event::RunError(e) => assert_eq!(e.code.as_deref(), Some("RUN_ABANDONED")),
            other => panic!("expected RUN_ERROR, got {other:?}"),
        }
        assert!(matches!(got[0].1, Event::RunStarted(_)));
    });
}
