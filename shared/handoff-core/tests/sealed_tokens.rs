//! `Engine::seal` / `Engine::unseal` (issue 52, MCP `requestState`): a token sealed on one
//! instance opens on another over the same store (the key lives there), for its scope only,
//! and any altered byte fails.

mod support;

use std::sync::Arc;

use futures::executor::block_on;
use handoff_core::runtime::{ManualClock, NeverSleep, SequentialIds};
use handoff_core::store::memory::MemoryStore;
use handoff_core::{CoreError, Engine, Runtime, Store};
use support::*;

fn instance(store: &Arc<dyn Store>, ids: &str) -> Engine {
    let runtime = Runtime::new(ManualClock::new(T0), SequentialIds::new(ids), NeverSleep);
    Engine::new(RefundAgent::new(Probe::new()), store.clone(), runtime)
}

#[test]
fn a_token_opens_on_every_instance_for_its_scope_only() {
    let store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let (one, two) = (instance(&store, "a"), instance(&store, "b"));
    let sealed = block_on(one.seal("scope-alice", b"thread t1")).unwrap();
    assert_eq!(
        block_on(two.unseal("scope-alice", &sealed)).unwrap(),
        b"thread t1"
    );
    assert!(matches!(
        block_on(two.unseal("scope-bob", &sealed)),
        Err(CoreError::InvalidCursor)
    ));
    for at in [0, sealed.len() - 1, sealed.find('.').unwrap() + 1] {
        let mut altered = sealed.clone().into_bytes();
        altered[at] = if altered[at] == b'0' { b'1' } else { b'0' };
        let altered = String::from_utf8(altered).unwrap();
        assert!(
            matches!(
                block_on(two.unseal("scope-alice", &altered)),
                Err(CoreError::InvalidCursor)
            ),
            "byte {at} altered"
        );
    }
    for garbage in ["", ".", "zz.zz", "00", &sealed[..sealed.len() - 2]] {
        assert!(
            block_on(one.unseal("scope-alice", garbage)).is_err(),
            "{garbage:?}"
        );
    }
    let other_store: Arc<dyn Store> = Arc::new(MemoryStore::new());
    let elsewhere = instance(&other_store, "c");
    assert!(
        block_on(elsewhere.unseal("scope-alice", &sealed)).is_err(),
        "another deployment's key does not open it"
    );
}
