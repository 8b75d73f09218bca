//! The Handoff web console: a chat with the agent, approval cards generated from each
//! interrupt's `responseSchema`, the thread's state and its A2A tasks, in one page that uses
//! the official `@ag-ui/client`. Its sources are `web/`; `make console` bundles them into
//! `assets/`, which this crate embeds (zlib-compressed) and the Worker serves as static assets.
//!
//! [`routes`] serves `GET /` and the page's two assets (`/console/app.js`,
//! `/console/app.css`). They carry no data and are public (a browser cannot attach a bearer
//! token to a navigation); every call the page makes goes to the authenticated routes with
//! the token the operator types in. They are sent with a strict content security policy
//! (`script-src 'self'`, no inline code) and revalidated by ETag. `HANDOFF_CONSOLE=off`
//! ([`enabled`]) leaves them out (dev server, Lambda); on Workers they are static assets
//! (`[assets]` in `wrangler.toml`; delete the section to remove them).
//!
//! The sources (`web/`) are bundled with esbuild by `make console` into `assets/`, which is
//! committed, so building Handoff needs no Node; embedded zlib-compressed they take about
//! 0.1 MB of the binary, behind the `handoff` feature `console` (default). `make lint`
//! checks the committed bundle is what the sources build to. Tests drive the page in
//! headless Chromium (`tests/node/console.test.mjs`, `console-threads.test.mjs`).
//!
//! ```
//! let app: axum::Router = axum::Router::new().merge(handoff_console::routes());
//! # let _ = app;
//! ```

mod serve;

pub use serve::routes;

/// The variable that turns the console off (`off`); it is on by default.
pub const CONSOLE_VAR: &str = "HANDOFF_CONSOLE";

/// One embedded file of the console.
#[derive(Debug)]
pub struct Asset {
    /// The path it is served at.
    pub route: &'static str,
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// A strong validator of its bytes, quoted as `ETag` wants it.
    pub etag: &'static str,
    /// Its size uncompressed.
    pub raw_len: usize,
    /// Its bytes, zlib-compressed (the `deflate` content coding).
    pub zlib: &'static [u8],
}

/// Every file of the console.
pub static ASSETS: &[Asset] = include!(concat!(env!("OUT_DIR"), "/assets.rs"));

/// The crate's error.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// `HANDOFF_CONSOLE` is neither on nor off.
    InvalidSetting {
        /// The value found.
        value: String,
    },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::InvalidSetting { value } => {
                write!(f, "{CONSOLE_VAR}={value:?} is not one of: on, off")
            }
        }
    }
}

impl std::error::Error for Error {}

/// Whether to serve the console, from `HANDOFF_CONSOLE` read through `lookup`: unset, empty
/// or `on` (also `true`, `1`) serve it; `off` (also `false`, `0`) does not.
pub fn enabled(lookup: impl Fn(&str) -> Option<String>) -> Result<bool, Error> {
    match lookup(CONSOLE_VAR)
        .map(|v| v.trim().to_ascii_lowercase())
        .as_deref()
    {
        None | Some("" | "on" | "true" | "1") => Ok(true),
        Some("off" | "false" | "0") => Ok(false),
        Some(_) => Err(Error::InvalidSetting {
            value: lookup(CONSOLE_VAR).unwrap_or_default(),
        }),
    }
}

/// The asset served at `route`, if any.
pub fn asset(route: &str) -> Option<&'static Asset> {
    ASSETS.iter().find(|a| a.route == route)
}
