//! ply: render kustomizations exactly as kustomize does, patch objects with kubectl's
//! strategic-merge semantics, and predict what `kubectl apply` would change. This file lists the
//! modules; it holds no logic.

pub mod cli;
pub mod diag;
pub mod diff;
mod explain;
pub mod fasthash;
pub mod fetch;
pub mod fs;
pub mod generate;
pub mod kustomization;
pub mod limits;
pub mod live;
pub mod merge;
pub mod output;
pub mod par;
pub mod patch_cmd;
pub mod pattern;
pub mod remote;
pub mod render;
pub mod report;
pub mod resource;
pub mod review;
pub mod schema;
pub mod snippet;
pub mod source;
pub mod transform;
pub mod yaml;

pub use diag::{Error, ErrorKind, Warnings};
pub use render::{RenderOptions, render};
