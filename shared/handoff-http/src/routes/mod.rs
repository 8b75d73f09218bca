//! Route handlers.

pub(crate) mod agent;
pub(crate) mod superagent;
pub(crate) mod threads;
