//! The starter on your machine: `make dev-starter` (PORT, default 8080; state in `.handoff`).

#[tokio::main]
async fn main() -> Result<(), handoff::server::Error> {
    handoff::server::serve(starter::ExpenseAgent).await
}
