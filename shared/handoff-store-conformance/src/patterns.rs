//! The design's own shapes over the store: a lease fenced by its thread record's version, an
//! effect that executes once, one run per resume.

use std::sync::atomic::{AtomicUsize, Ordering};

use futures::future::join_all;
use handoff_core::store::{Condition, Store, StoreError, Write};
use serde_json::{Value, json};

use crate::support::{Namespace, create, expect_item, failed_at, get_one, list, ok, yield_now};
use crate::{BASE_MS, CONCURRENCY};

/// An expired lease can be taken over and the old holder's fenced commit then fails, in the
/// shape the design uses: the lease lives inside a long-lived thread record (no store expiry)
/// whose version is the fence. The old holder's fenced commits fail once the new holder moved the
/// version, whatever clock the old holder uses; the new holder's succeed.
pub async fn expired_lease_can_be_taken_over<S: Store>(store: &S) {
    let ns = Namespace::new("expired_lease_can_be_taken_over");
    let p = ns.partition("thread");
    let t0 = BASE_MS;
    let thread = |holder: Option<&str>, expires_at: u64| {
        json!({ "lease": holder.map(|h| json!({ "holder": h, "expires_at": expires_at })) })
            .to_string()
            .into_bytes()
    };
    let fenced = |fence: u64, key: &str, by: &str| {
        vec![
            Write::check("thread", Condition::Version(fence)),
            Write::put(key, Condition::Absent, by.as_bytes().to_vec(), None),
        ]
    };

    create(store, &p, "thread", thread(None, 0), t0).await;
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Version(1),
                    thread(Some("A"), t0 + 1_000),
                    None,
                )],
                t0,
            )
            .await,
        "A takes the lease",
    );
    let a_fence = 2;
    ok(
        store
            .commit(&p, fenced(a_fence, "step#1", "A"), t0 + 500)
            .await,
        "A's fenced commit while it holds the lease",
    );

    // B reads the thread, finds A's lease expired by its own clock and takes it over.
    let seen = get_one(store, &p, "thread", t0 + 1_000)
        .await
        .unwrap_or_else(|| panic!("the thread vanished"));
    assert_eq!(
        seen.version, a_fence,
        "the thread after A's fenced commit (a Check does not move the version)"
    );
    ok(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Version(seen.version),
                    thread(Some("B"), t0 + 2_000),
                    None,
                )],
                t0 + 1_000,
            )
            .await,
        "B takes over the expired lease",
    );
    let b_fence = a_fence + 1;
    expect_item(
        get_one(store, &p, "thread", t0 + 1_000).await.as_ref(),
        b_fence,
        &thread(Some("B"), t0 + 2_000),
        None,
        "the thread after the takeover",
    );

    failed_at(
        store
            .commit(&p, fenced(a_fence, "result", "A"), t0 + 1_001)
            .await,
        0,
        "the old holder's fenced commit",
    );
    failed_at(
        store
            .commit(&p, fenced(a_fence, "result", "A"), t0 + 500)
            .await,
        0,
        "the old holder's fenced commit with its own, older clock",
    );
    failed_at(
        store
            .commit(
                &p,
                vec![Write::put(
                    "thread",
                    Condition::Version(a_fence),
                    thread(None, 0),
                    None,
                )],
                t0 + 1_001,
            )
            .await,
        0,
        "the old holder finishing the thread",
    );
    ok(
        store
            .commit(&p, fenced(b_fence, "result", "B"), t0 + 1_500)
            .await,
        "the new holder's fenced commit",
    );
    expect_item(
        get_one(store, &p, "result", t0 + 1_500).await.as_ref(),
        1,
        b"B",
        None,
        "the committed result",
    );
    expect_item(
        get_one(store, &p, "thread", t0 + 1_500).await.as_ref(),
        b_fence,
        &thread(Some("B"), t0 + 2_000),
        None,
        "the thread at the end",
    );
}

/// An effect executes exactly once per key, in the engine's shape: for each of three keys,
/// [`CONCURRENCY`] callers race to create `effect#k` with `Absent`, each fenced by a check of the
/// thread record (batch index 0) and without reading the key first; only a caller whose
/// creation committed runs the "side effect" (an external counter) and then records the result
/// with `Version(1)`. A loser's commit fails at index 1, the put (the engine tells a lost lease
/// from an existing record by that index), and it finds the winner's record. Every counter
/// ends at 1.
pub async fn effect_executes_exactly_once<S: Store>(store: &S) {
    const KEYS: usize = 3;
    let ns = Namespace::new("effect_executes_exactly_once");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let executed: Vec<AtomicUsize> = (0..KEYS).map(|_| AtomicUsize::new(0)).collect();
    create(store, &p, "thread", b"{}".to_vec(), now).await;
    let fenced = |write: Write| vec![Write::check("thread", Condition::Version(1)), write];
    let outcomes = join_all((0..KEYS * CONCURRENCY).map(|n| {
        let (k, i) = (n % KEYS, n / KEYS);
        let (p, executed, fenced) = (&p, &executed, &fenced);
        async move {
            let key = format!("effect#{k}");
            yield_now().await;
            let started = json!({ "status": "started", "by": i })
                .to_string()
                .into_bytes();
            match store
                .commit(
                    p,
                    fenced(Write::put(key.as_str(), Condition::Absent, started, None)),
                    now,
                )
                .await
            {
                Ok(()) => {
                    executed[k].fetch_add(1, Ordering::SeqCst);
                    yield_now().await;
                    let done =
                        json!({ "status": "done", "by": i, "result": format!("charged by {i}") })
                            .to_string()
                            .into_bytes();
                    let recorded = store
                        .commit(
                            p,
                            fenced(Write::put(key.as_str(), Condition::Version(1), done, None)),
                            now,
                        )
                        .await;
                    Some((k, i, recorded))
                }
                Err(StoreError::ConditionFailed { index: 1 }) => {
                    let item = get_one(store, p, &key, now)
                        .await
                        .unwrap_or_else(|| panic!("caller {i} lost {key} but finds no record"));
                    let value: Value = serde_json::from_slice(&item.value)
                        .unwrap_or_else(|e| panic!("corrupt effect record: {e}"));
                    assert_ne!(
                        value["by"],
                        json!(i),
                        "caller {i} lost the race for {key} but the record names it"
                    );
                    None
                }
                Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
            }
        }
    }))
    .await;
    for (k, count) in executed.iter().enumerate() {
        assert_eq!(
            count.load(Ordering::SeqCst),
            1,
            "effect#{k} must execute exactly once"
        );
        let winners: Vec<usize> = outcomes
            .iter()
            .flatten()
            .filter(|(key, _, _)| *key == k)
            .map(|(_, i, _)| *i)
            .collect();
        assert_eq!(
            winners.len(),
            1,
            "effect#{k}: exactly one caller may create the record, got {winners:?}"
        );
        for (_, i, recorded) in outcomes.iter().flatten().filter(|(key, _, _)| *key == k) {
            assert_eq!(
                recorded,
                &Ok(()),
                "effect#{k}: caller {i} created the record and must be able to complete it at version 1"
            );
        }
        let item = get_one(store, &p, &format!("effect#{k}"), now)
            .await
            .unwrap_or_else(|| panic!("effect#{k} has no record"));
        let value: Value = serde_json::from_slice(&item.value)
            .unwrap_or_else(|e| panic!("corrupt effect record: {e}"));
        assert_eq!(item.version, 2, "effect#{k}: created once, completed once");
        assert_eq!(
            value,
            json!({ "status": "done", "by": winners[0], "result": format!("charged by {}", winners[0]) }),
            "effect#{k}'s record"
        );
    }
}

/// N concurrent identical resumes start one run: [`CONCURRENCY`] callers read an interrupted
/// thread and each try to start their own run with one batch (thread at the read version,
/// `resume#answer` absent, `run#<id>` absent). Exactly one batch commits; that run executes the
/// effect once; every other caller finds the resume record pointing at the winner's run, whose
/// record exists (it was created atomically with the resume record).
pub async fn concurrent_identical_resumes_start_one_run<S: Store>(store: &S) {
    let ns = Namespace::new("concurrent_identical_resumes_start_one_run");
    let p = ns.partition("thread");
    let now = BASE_MS;
    let interrupted = json!({ "status": "interrupted" }).to_string().into_bytes();
    ok(
        store
            .commit(
                &p,
                vec![Write::put("thread", Condition::Absent, interrupted, None)],
                now,
            )
            .await,
        "setup",
    );
    let executed = AtomicUsize::new(0);
    let outcomes = join_all((0..CONCURRENCY).map(|i| {
        let (p, executed) = (&p, &executed);
        async move {
            let run_id = format!("run-{i:02}");
            let snapshot = ok(store.get(p, &["thread", "resume#answer"], now).await, "read the thread");
            if let Some(resume) = &snapshot[1] {
                return (i, false, String::from_utf8_lossy(&resume.value).into_owned());
            }
            let thread = snapshot[0].as_ref().unwrap_or_else(|| panic!("caller {i}: the thread vanished"));
            yield_now().await;
            let running = json!({ "status": "running", "run": run_id }).to_string().into_bytes();
            let writes = vec![
                Write::put("thread", Condition::Version(thread.version), running, None),
                Write::put("resume#answer", Condition::Absent, run_id.clone().into_bytes(), None),
                Write::put(format!("run#{run_id}"), Condition::Absent, b"running".to_vec(), None),
            ];
            match store.commit(p, writes, now).await {
                Ok(()) => {
                    yield_now().await;
                    match store.commit(p, vec![Write::put("effect#charge", Condition::Absent, run_id.clone().into_bytes(), None)], now).await {
                        Ok(()) => {
                            executed.fetch_add(1, Ordering::SeqCst);
                        }
                        Err(StoreError::ConditionFailed { index: 0 }) => {}
                        Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
                    }
                    (i, true, run_id)
                }
                Err(StoreError::ConditionFailed { index }) => {
                    assert!(index <= 1, "caller {i}: the batch can only fail on the thread or the resume record, not at {index}");
                    let resume = get_one(store, p, "resume#answer", now).await.unwrap_or_else(|| panic!("caller {i}: lost the race but finds no resume record"));
                    (i, false, String::from_utf8_lossy(&resume.value).into_owned())
                }
                Err(e) => panic!("caller {i}: unexpected store error {e:?}"),
            }
        }
    }))
    .await;
    let winners: Vec<&String> = outcomes
        .iter()
        .filter(|(_, started, _)| *started)
        .map(|(_, _, run)| run)
        .collect();
    assert_eq!(
        winners.len(),
        1,
        "exactly one resume may start a run, started: {winners:?}"
    );
    let winner = winners[0].clone();
    for (i, _, run) in &outcomes {
        assert_eq!(run, &winner, "caller {i} must replay the winner's run");
    }
    assert_eq!(
        executed.load(Ordering::SeqCst),
        1,
        "the effect must execute once"
    );
    assert_eq!(
        list(store, &p, "run#", now).await,
        vec![format!("run#{winner}")],
        "exactly one run record"
    );
}
