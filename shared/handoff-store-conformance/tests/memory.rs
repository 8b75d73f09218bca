//! The suite against the reference store: every check must pass.

use handoff_core::store::memory::MemoryStore;
use handoff_store_conformance::{Guarded, run_all, store_conformance_tests};

store_conformance_tests!(MemoryStore::new());

/// `run_all` with a factory, and a store shared by every check (each check uses its own partitions).
#[test]
fn run_all_against_one_shared_store() {
    let shared = std::sync::Arc::new(MemoryStore::new());
    futures::executor::block_on(run_all(|| std::sync::Arc::clone(&shared)));
}

/// `Guarded` delegates every call.
#[test]
fn run_all_through_guarded() {
    futures::executor::block_on(run_all(|| {
        Guarded::new(MemoryStore::new(), String::from("guard"))
    }));
}
