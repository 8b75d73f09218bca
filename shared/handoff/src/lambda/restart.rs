//! The runtime loop started again when it ends on a Runtime API error (see [`keep_serving`]).

use std::future::Future;

use lambda_http::Error;

/// How many times in a row the runtime loop may end on an error before it served any
/// invocation (the Runtime API itself failing) and be started again; one more and the
/// function exits with the error.
const IDLE_RESTARTS: u32 = 3;

/// Runs the runtime loop (`run`) and, when it ends on an error, runs it again.
///
/// `lambda_runtime` ends its loop, and with it the process, on any transport error of the
/// Runtime API, among them one invocation's streamed response whose connection the Runtime
/// API closed before the function had read its answer (`IncompleteMessage`). `cargo lambda
/// watch` does that when the client abandons a streamed response mid-body, as
/// `@copilotkit/core`'s thread store does with every mutation (it aborts the fetch as soon
/// as the headers arrive). That response was over for its client anyway: the function goes
/// on with the next invocation rather than exit (a cold start on Lambda; under `cargo lambda
/// watch`, which never restarts an exited function, every later request hanging). A loop
/// that fails again and again before it served an invocation (`invocations`, read before
/// and after each run, unchanged) is a Runtime API that is not there: after
/// [`IDLE_RESTARTS`] attempts the function exits with the error.
pub(super) async fn keep_serving<F, Fut>(
    mut run: F,
    invocations: impl Fn() -> u64,
) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<(), Error>>,
{
    let mut idle_failures = 0;
    loop {
        let before = invocations();
        let error = match run().await {
            Ok(()) => return Ok(()),
            Err(error) => error,
        };
        if invocations() == before {
            idle_failures += 1;
            if idle_failures > IDLE_RESTARTS {
                return Err(error);
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        } else {
            idle_failures = 0;
        }
        tracing::warn!(
            %error,
            "the Lambda runtime loop ended on a Runtime API error; polling for the next invocation again"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::{Error, IDLE_RESTARTS, keep_serving};

    /// A runtime loop that served `served[i]` invocations in its `i`th run and then ended
    /// on an error, and returns `Ok` once `served` is used up.
    async fn runs(served: &[u64]) -> (Result<(), Error>, usize) {
        let run = Cell::new(0);
        let invocations = Cell::new(0);
        let result = keep_serving(
            || {
                let i = run.get();
                run.set(i + 1);
                let outcome = match served.get(i) {
                    Some(n) => {
                        invocations.set(invocations.get() + n);
                        Err::<(), Error>(format!("run {i}: IncompleteMessage").into())
                    }
                    None => Ok(()),
                };
                async move { outcome }
            },
            || invocations.get(),
        )
        .await;
        (result, run.get())
    }

    #[tokio::test]
    async fn a_loop_that_served_is_started_again_however_often_it_fails() {
        let (result, runs) = runs(&[1; 20]).await;
        assert!(result.is_ok());
        assert_eq!(runs, 21);
    }

    #[tokio::test]
    async fn a_runtime_api_that_is_not_there_ends_the_function() {
        let (result, runs) = runs(&[0; 10]).await;
        let limit = usize::try_from(IDLE_RESTARTS).expect("a small number");
        assert_eq!(
            result.unwrap_err().to_string(),
            format!("run {limit}: IncompleteMessage")
        );
        assert_eq!(runs, limit + 1);
    }

    #[tokio::test]
    async fn an_invocation_served_resets_the_idle_failures() {
        let (result, runs) = runs(&[0, 0, 0, 1, 0, 0, 0, 2]).await;
        assert!(result.is_ok());
        assert_eq!(runs, 9);
    }
}
