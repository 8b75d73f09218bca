//! Approval policies are enforced by the engine's claim, from the copy stored with the
//! pending interrupt: roles, not the requester (the principal whose run raised it),
//! edit rules against the proposed arguments, and named checks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use agui_protocol::{Event, Interrupt, Message, ResumeEntry, RunAgentInput};
use async_trait::async_trait;
use futures::StreamExt;
use futures::executor::block_on;
use handoff_core::codes::ErrorCode;
use handoff_core::runtime::{ManualClock, NeverSleep, Runtime, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{
    Agent, AgentError, ApprovalPolicy, CoreError, Engine, Finish, Principal, RaisedInterrupt,
    RunContext, RunOptions, WithApproval,
};
use proptest::prelude::*;
use serde_json::{Value, json};

const PROPOSED: u64 = 500;

/// Proposes `pay {to, cents}` under `policy`; an approval pays (once, through an effect)
/// with the arguments as answered, and with `reraise` its first resume asks again.
struct PayAgent {
    policy: Value,
    reraise: AtomicBool,
    paid: Arc<Mutex<Vec<Value>>>,
}

impl PayAgent {
    fn interrupt(&self, ctx: &mut RunContext) -> RaisedInterrupt {
        let call = ctx.tool_call("pay", &json!({"to": "acct-1", "cents": PROPOSED}));
        let interrupt = Interrupt::new(format!("int-{call}"), "tool_call").with_tool_call(call);
        match serde_json::from_value::<ApprovalPolicy>(self.policy.clone()) {
            Ok(policy) => interrupt.with_approval(&policy),
            // Not a policy: written into metadata by hand, as before policies were typed.
            // The engine must refuse to store it (APPROVAL_POLICY_MISSING).
            Err(_) => {
                let mut metadata = agui_protocol::Metadata::new();
                metadata.insert("handoff.approval".to_owned(), self.policy.clone());
                interrupt.with_metadata(metadata).into()
            }
        }
    }
}

#[async_trait]
impl Agent for PayAgent {
    async fn run(&self, ctx: &mut RunContext) -> Result<Finish, AgentError> {
        if !ctx.is_resume() {
            return Ok(Finish::interrupt(self.interrupt(ctx)));
        }
        for decision in ctx.decisions().to_vec() {
            if !decision.approved() {
                continue;
            }
            let args = decision
                .edited_args()
                .cloned()
                .unwrap_or(json!({"to": "acct-1", "cents": PROPOSED}));
            let paid = self.paid.clone();
            let key = format!("pay-{}", decision.id());
            ctx.effect(&key, move |_key| async move {
                paid.lock().unwrap().push(args);
                Ok::<_, String>(())
            })
            .await?;
        }
        if self.reraise.swap(false, Ordering::SeqCst) {
            return Ok(Finish::interrupt(self.interrupt(ctx)));
        }
        Ok(Finish::done())
    }
}

struct Bench {
    engine: Engine,
    store: Arc<MemoryStore>,
    paid: Arc<Mutex<Vec<Value>>>,
}

fn bench(policy: &ApprovalPolicy, reraise: bool) -> Bench {
    let paid = Arc::new(Mutex::new(Vec::new()));
    let agent = PayAgent {
        policy: serde_json::to_value(policy).unwrap(),
        reraise: AtomicBool::new(reraise),
        paid: paid.clone(),
    };
    let runtime = Runtime::new(ManualClock::new(1_000), SequentialIds::new("x"), NeverSleep);
    let store = Arc::new(MemoryStore::new());
    let engine = Engine::new(agent, store.clone(), runtime);
    Bench {
        engine,
        store,
        paid,
    }
}

fn alice() -> Principal {
    Principal::new("acme", "alice")
}
fn bob() -> Principal {
    Principal::new("acme", "bob").with_roles(["approver"])
}

async fn run(
    engine: &Engine,
    who: &Principal,
    input: RunAgentInput,
) -> Result<Vec<Event>, CoreError> {
    let options = RunOptions {
        principal: who.clone(),
        ..RunOptions::default()
    };
    Ok(engine.start(input, options).await?.collect().await)
}

async fn pending(engine: &Engine) -> Vec<Interrupt> {
    let view = engine.thread(&alice(), "t").await.unwrap().unwrap();
    view.pending_interrupts
}

async fn ask(engine: &Engine) -> Interrupt {
    let input = RunAgentInput::new("t", "r0", vec![Message::user("m1", "pay")]);
    run(engine, &alice(), input)
        .await
        .expect("the request runs");
    pending(engine).await.remove(0)
}

async fn answer(
    engine: &Engine,
    who: &Principal,
    run_id: &str,
    entry: ResumeEntry,
) -> Result<Vec<Event>, CoreError> {
    let input = RunAgentInput::new("t", run_id, Vec::new()).with_resume(vec![entry]);
    run(engine, who, input).await
}

fn approve(interrupt: &Interrupt, payload: Value) -> ResumeEntry {
    ResumeEntry::resolved(interrupt.id.clone(), payload)
}

/// Before, the thread's first principal stood for every requester: bob, whose answer ran
/// the run that asked again, could approve his own request, and alice could not approve it.
#[test]
fn the_requester_is_the_principal_whose_run_raised_the_interrupt() {
    block_on(async {
        let policy = ApprovalPolicy::new().role("approver").not_requester();
        let b = bench(&policy, true);
        let first = ask(&b.engine).await;
        answer(
            &b.engine,
            &bob(),
            "r1",
            approve(&first, json!({"approved": true})),
        )
        .await
        .expect("bob approves alice's request");
        let second = pending(&b.engine).await.remove(0);
        assert_ne!(second.id, first.id);

        let err = answer(
            &b.engine,
            &bob(),
            "r2",
            approve(&second, json!({"approved": true})),
        )
        .await
        .expect_err("bob's run raised it");
        assert_eq!((err.code().name, err.http_status()), ("FORBIDDEN", 403));
        assert!(
            err.to_string().contains("other than its requester"),
            "{err}"
        );
        let alice_approver = alice().with_roles(["approver"]);
        answer(
            &b.engine,
            &alice_approver,
            "r3",
            approve(&second, json!({"approved": true})),
        )
        .await
        .expect("alice owns the thread but did not ask for this one");
        assert_eq!(b.paid.lock().unwrap().len(), 2);
    });
}

#[test]
fn without_edit_rules_no_edit_passes_and_an_unchanged_one_does() {
    block_on(async {
        let b = bench(&ApprovalPolicy::new(), false);
        let interrupt = ask(&b.engine).await;
        let edit = json!({"approved": true, "editedArgs": {"to": "acct-1", "cents": 1}});
        let err = answer(&b.engine, &alice(), "r1", approve(&interrupt, edit))
            .await
            .expect_err("no rule allows a change");
        assert_eq!(
            (err.code().name, err.http_status()),
            ("RESUME_PAYLOAD_INVALID", 422)
        );
        assert!(err.to_string().contains("editedArgs.cents"), "{err}");
        assert!(b.paid.lock().unwrap().is_empty());
        let same = json!({"approved": true, "editedArgs": {"to": "acct-1", "cents": PROPOSED}});
        answer(&b.engine, &alice(), "r2", approve(&interrupt, same))
            .await
            .expect("an edit that changes nothing");
        assert_eq!(b.paid.lock().unwrap().len(), 1);
    });
}

#[test]
fn named_checks_refuse_with_their_reason_and_an_unregistered_one_fails_closed() {
    block_on(async {
        let policy = ApprovalPolicy::new().editable("cents").check("cap");
        let edit =
            |cents: u64| json!({"approved": true, "editedArgs": {"to": "acct-1", "cents": cents}});

        let unregistered = bench(&policy, false);
        let interrupt = ask(&unregistered.engine).await;
        let err = answer(
            &unregistered.engine,
            &alice(),
            "r1",
            approve(&interrupt, edit(100)),
        )
        .await
        .expect_err("nobody registered cap");
        assert_eq!(err.code().name, "RESUME_PAYLOAD_INVALID");
        assert!(err.to_string().contains("not registered"), "{err}");

        let b = bench(&policy, false);
        let engine = b.engine.clone().with_approval_check("cap", |answer| {
            match answer.edited.and_then(|e| e["cents"].as_u64()) {
                Some(cents) if cents > 300 => Err(format!("{cents} is over the cap of 300")),
                _ => Ok(()),
            }
        });
        let interrupt = ask(&engine).await;
        let err = answer(&engine, &alice(), "r1", approve(&interrupt, edit(400)))
            .await
            .expect_err("over the cap");
        assert!(
            err.to_string().contains("cap: 400 is over the cap"),
            "{err}"
        );
        answer(&engine, &alice(), "r2", approve(&interrupt, edit(200)))
            .await
            .expect("within the cap");
        assert_eq!(
            *b.paid.lock().unwrap(),
            [json!({"to": "acct-1", "cents": 200})]
        );
    });
}

#[test]
fn an_unreadable_policy_fails_the_run_that_raises_it() {
    block_on(async {
        let paid = Arc::new(Mutex::new(Vec::new()));
        let agent = PayAgent {
            policy: json!({"roles": "approver"}),
            reraise: AtomicBool::new(false),
            paid,
        };
        let runtime = Runtime::new(ManualClock::new(1_000), SequentialIds::new("x"), NeverSleep);
        let engine = Engine::new(agent, Arc::new(MemoryStore::new()), runtime);
        let input = RunAgentInput::new("t", "r0", vec![Message::user("m1", "pay")]);
        let events = run(&engine, &alice(), input).await.unwrap();
        match events.last() {
            Some(Event::RunError(e)) => {
                assert_eq!(e.code.as_deref(), Some("APPROVAL_POLICY_MISSING"), "{e:?}")
            }
            other => panic!("expected RUN_ERROR, got {other:?}"),
        }
        assert!(pending(&engine).await.is_empty());
    });
}

#[test]
fn with_approval_puts_the_policy_where_the_engine_reads_it() {
    let policy = ApprovalPolicy::new()
        .role("a")
        .role("b")
        .at_least_original("n");
    let raised = Interrupt::new("i", "tool_call").with_approval(&policy);
    assert_eq!(raised.policy(), Some(&policy));
    assert_eq!(raised.source(), Some(handoff_core::ApprovalSource::Agent));
}

#[derive(Debug, Clone)]
enum Who {
    Requester,
    RequesterWithRole,
    Colleague,
    Approver,
}

impl Who {
    fn principal(&self) -> Principal {
        match self {
            Who::Requester => alice(),
            Who::RequesterWithRole => alice().with_roles(["approver"]),
            Who::Colleague => Principal::new("acme", "carol"),
            Who::Approver => bob(),
        }
    }
}

fn who() -> impl Strategy<Value = Who> {
    prop_oneof![
        Just(Who::Requester),
        Just(Who::RequesterWithRole),
        Just(Who::Colleague),
        Just(Who::Approver),
    ]
}

fn payload() -> impl Strategy<Value = Option<Value>> {
    // Below zero and fractional amounts too: neither may execute.
    let cents = prop_oneof![
        (-1_000..1_000_i64).prop_map(|c| json!(c)),
        (-1_000.0..1_000.0_f64).prop_map(|c| json!(c)),
    ];
    let edit = (
        prop_oneof![Just("acct-1"), Just("acct-2")],
        cents,
        any::<bool>(),
    )
        .prop_map(|(to, cents, keep_to)| {
            let mut args = json!({"cents": cents});
            if keep_to {
                args["to"] = json!(to);
            }
            json!({"approved": true, "editedArgs": args})
        });
    prop_oneof![
        Just(None),
        Just(Some(json!({"approved": true}))),
        Just(Some(json!({"approved": false}))),
        edit.prop_map(Some),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// No sequence of answers executes a payment unless an approver other than the
    /// requester approved it, and what executes is within the edit rules.
    #[test]
    fn only_an_approver_other_than_the_requester_ever_executes(
        answers in proptest::collection::vec((who(), payload()), 1..6)
    ) {
        let policy = ApprovalPolicy::new()
            .role("approver")
            .not_requester()
            .fixed("to")
            .at_most_original("cents");
        let b = bench(&policy, false);
        block_on(async {
            let interrupt = ask(&b.engine).await;
            for (n, (who, payload)) in answers.iter().enumerate() {
                let entry = match payload {
                    Some(p) => approve(&interrupt, p.clone()),
                    None => ResumeEntry::cancelled(interrupt.id.clone()),
                };
                let before = b.paid.lock().unwrap().len();
                let _ = answer(&b.engine, &who.principal(), &format!("r{n}"), entry).await;
                if b.paid.lock().unwrap().len() > before {
                    prop_assert!(matches!(who, Who::Approver), "{who:?} executed with {payload:?}");
                }
            }
            let paid = b.paid.lock().unwrap().clone();
            prop_assert!(paid.len() <= 1);
            for args in paid {
                prop_assert_eq!(&args["to"], "acct-1");
                prop_assert!(args["cents"].as_u64().is_some_and(|c| c <= PROPOSED), "{args}");
            }
            Ok(())
        })?;
    }
}

/// An interrupt is answered through the agent that raised it: through another agent's
/// route it is not pending (409), and nothing is written.
#[test]
fn an_interrupt_is_not_pending_for_another_agent() {
    block_on(async {
        let policy = ApprovalPolicy::new().role("approver").not_requester();
        let b = bench(&policy, false);
        let interrupt = ask(&b.engine).await;
        let input = RunAgentInput::new("t", "r-other", Vec::new())
            .with_resume(vec![approve(&interrupt, json!({"approved": true}))]);
        let options = RunOptions {
            principal: bob(),
            agent_id: Some("another-agent".to_owned()),
            ..RunOptions::default()
        };
        let err = match b.engine.start(input, options).await {
            Err(err) => err,
            Ok(_) => panic!("answered through another agent"),
        };
        assert!(
            matches!(err, CoreError::InterruptNotPending { .. }),
            "{err:?}"
        );
        assert_eq!(
            pending(&b.engine).await,
            std::slice::from_ref(&interrupt),
            "nothing written"
        );
        assert!(b.paid.lock().unwrap().is_empty());
        answer(
            &b.engine,
            &bob(),
            "r-own",
            approve(&interrupt, json!({"approved": true})),
        )
        .await
        .expect("through its own agent");
        assert_eq!(b.paid.lock().unwrap().len(), 1);
    });
}

/// Rewrites the stored thread head of `t` with `edit` applied to its first pending
/// interrupt (as a record written by an older or a broken server would read).
async fn rewrite_pending(store: &MemoryStore, edit: impl Fn(&mut Value)) {
    use handoff_core::records::THREAD_KEY;
    use handoff_core::{Condition, Store, Write};
    let partition = alice().partition("t").unwrap();
    let item = store
        .get_one(&partition, THREAD_KEY, 1_000)
        .await
        .unwrap()
        .unwrap();
    let mut head: Value = serde_json::from_slice(&item.value).unwrap();
    edit(&mut head["pending"][0]);
    let write = Write::put(
        THREAD_KEY,
        Condition::Version(item.version),
        head.to_string().into_bytes(),
        item.expires_at_ms,
    );
    store.commit(&partition, vec![write], 1_000).await.unwrap();
}

/// A record stored before policies were typed keeps its metadata policy; one that claims a
/// policy nobody can read is resolved by no one (its owner may still cancel it).
#[test]
fn a_stored_approval_without_a_readable_policy_is_answered_by_no_one() {
    block_on(async {
        let policy = ApprovalPolicy::new().role("approver").not_requester();
        let b = bench(&policy, false);
        let interrupt = ask(&b.engine).await;
        // As written before typed policies: the policy only in the metadata.
        rewrite_pending(&b.store, |pending| {
            pending.as_object_mut().unwrap().remove("approval");
        })
        .await;
        let own = answer(
            &b.engine,
            &alice(),
            "r1",
            approve(&interrupt, json!({"approved": true})),
        )
        .await;
        assert!(
            matches!(own, Err(CoreError::Forbidden(_))),
            "the legacy policy holds"
        );
        // A claim of a policy that cannot be read.
        rewrite_pending(&b.store, |pending| {
            pending["interrupt"]["metadata"]["handoff.approval"] = json!({"roles": "approver"});
        })
        .await;
        for who in [alice(), bob()] {
            let err = answer(
                &b.engine,
                &who,
                "r2",
                approve(&interrupt, json!({"approved": true})),
            )
            .await
            .expect_err("nobody may resolve it");
            // The owner is refused; an approver is not even lent the thread.
            assert!(
                matches!(err, CoreError::Forbidden(_) | CoreError::ThreadNotFound),
                "{err:?}"
            );
        }
        assert!(b.paid.lock().unwrap().is_empty());
        let cancel = ResumeEntry::cancelled(interrupt.id.clone());
        answer(&b.engine, &alice(), "r3", cancel)
            .await
            .expect("the requester may withdraw it");
        assert!(pending(&b.engine).await.is_empty());
    });
}

/// The inbox lists an interrupt to whoever the claim would let resolve it: not to the
/// requester of a four-eyes approval (even with no role named), but to someone else
/// allowed to answer it.
#[test]
fn the_inbox_shows_what_the_claim_would_accept() {
    block_on(async {
        let policy = ApprovalPolicy::new().not_requester();
        let b = bench(&policy, false);
        let interrupt = ask(&b.engine).await;
        let inbox = b.engine.list_approvals(&alice(), 10, None).await.unwrap();
        assert!(inbox.approvals.is_empty(), "{:?}", inbox.approvals);
        let own = answer(
            &b.engine,
            &alice(),
            "r1",
            approve(&interrupt, json!({"approved": true})),
        )
        .await;
        assert!(matches!(own, Err(CoreError::Forbidden(_))));
    });
}
