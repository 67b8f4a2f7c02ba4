//! The one integration test binary: walks the golden directories under `testdata/` and
//! compares what ply does with the recorded expectations, exactly. `PLY_BLESS=1` rewrites the
//! expectations instead (check every blessed file against the oracle before committing it).
//! Each area has its own module here.

mod support;
mod yaml;

mod bad_input;
mod cli;
mod diff;
mod explain;
mod gitops;
mod gitops_argo;
mod merge;
mod render;
mod review;
mod review_causes;
