//! The starter on AWS Lambda behind a streaming Function URL (`infra/template.yaml`,
//! `StarterFunction`); state in the DynamoDB table `HANDOFF_TABLE`.

#[tokio::main]
async fn main() -> Result<(), handoff::lambda::Error> {
    handoff::lambda::run(starter::ExpenseAgent).await
}
