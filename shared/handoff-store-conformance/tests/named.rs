//! `run_named` dispatches every listed check, and only those.
use handoff_core::store::memory::MemoryStore;
use handoff_store_conformance::{CHECK_NAMES, run_named};

#[test]
fn every_listed_check_runs_by_name_on_the_reference_store() {
    futures::executor::block_on(async {
        for name in CHECK_NAMES {
            assert!(
                run_named(name, &std::sync::Arc::new(MemoryStore::new())).await,
                "{name} is not dispatched"
            );
        }
        assert!(!run_named("no_such_check", &std::sync::Arc::new(MemoryStore::new())).await);
    });
}
