//! Test support shared by the integration tests and the corpus generator.

pub mod corpus;
pub mod dynamo_bill;
pub mod history_cost;
pub mod tck_agent;
