//! What the classifier is asked about a large output, and what its answers
//! mean: one request per segment, its answers read as a keep set, the keep
//! sets as one decision per output (docs/GUARD.md, "What it judges").
//!
//! For: the request of one segment (state and questions, in Pi's
//! `ClassifierContext` shape), the keep set of one answered segment, and the
//! decision for one output from its segments. Not for: sending requests or
//! timing them (the extension), cutting the output (`chunk`) or writing the
//! replacement (`render`).
//!
//! Three steps, one module each, in the order a segment goes through them:
//!
//! - [`request`]: the request of one segment;
//! - [`verdict`]: one segment's answers read as its keep set ([`interpret`]);
//! - [`result`]: the decision for one output from its segments' verdicts
//!   ([`decide_result`]).
//!
//! Later steps import earlier ones, never back. Callers use the items
//! re-exported here.

pub mod request;
pub mod result;
pub mod verdict;

pub use request::{chunk_key, large_request, large_request_with, RequestInput};
pub use result::{decide_result, Cited, Decision, Outcome, ResultInput};
pub use verdict::{interpret, Reason, Verdict};
