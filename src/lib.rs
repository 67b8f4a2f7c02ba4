//! ply: render kustomizations exactly as kustomize does, patch objects with kubectl's
//! strategic-merge semantics, and predict what `kubectl apply` would change. This file lists the
//! modules and the library's surface; it holds no logic.
//!
//! The surface is what a library user needs: [`render()`] and its options, the reviews and
//! live diffs of [`diff`], the patches of [`merge`], the document model of [`yaml`], the file
//! systems renders read through ([`fs`]), and the errors. Everything else is `pub(crate)`
//! (`unreachable_pub` is on, so a `pub` that nothing outside can reach does not compile in CI).
//! [`testing`] names what ply's own tests and fuzz targets reach below that surface; it is not
//! a stable API.

#![warn(unreachable_pub)]

mod cli;
mod diag;
pub mod diff;
mod explain;
mod fasthash;
mod fetch;
pub mod fs;
mod generate;
mod gitops;
mod kustomization;
mod limits;
mod live;
pub mod merge;
mod output;
mod par;
mod patch_cmd;
mod pattern;
mod remote;
pub mod render;
mod report;
mod resource;
mod review;
mod schema;
mod snippet;
mod source;
mod transform;
pub mod yaml;

pub use cli::run;
pub use diag::{Error, ErrorKind, Result, Warnings};
pub use limits::with_deep_stack;
pub use render::{KustomizeVersion, OutputOrder, Reading, RenderOptions};
pub use render::{render, render_with};
pub use resource::{Gvk, Resource};
pub use schema::Schema;
pub use source::{Location, SourceFile};

/// What ply's own integration tests, fuzz targets and benchmarks reach below the library
/// surface: the two YAML readers compared one with the other, server-side apply's internals,
/// the live and report layers the diff fuzz target drives. Not a stable API.
#[doc(hidden)]
pub mod testing {
    pub use crate::cli::{render_error, render_error_with};
    pub use crate::fs::record::Recording;
    pub use crate::fs::remote::{bytes_hash, file_path};
    pub use crate::live::read_objects;
    pub use crate::remote::lock::Lock;
    pub use crate::render::reads::reads;
    pub use crate::report::{json::live as json_live, unified::live as unified_live};
    pub use crate::snippet::ShowOptions;
    pub use crate::yaml::limits::{NESTING_MESSAGE, READER_DEPTH};
    pub use crate::yaml::parse::{
        ParsedDoc, parse_config_documents, parse_documents, parse_documents_fast_reader,
        parse_documents_marking_empty_nulls_fast_reader,
        parse_documents_marking_empty_nulls_reference_reader, parse_documents_reference_reader,
        parse_one,
    };

    /// Server-side apply's internals, for the SSA conformance corpus and the fieldsV1 fuzz
    /// target.
    pub mod ssa {
        pub use crate::merge::ssa::from_schema::{KindSchema, for_kind};
        pub use crate::merge::ssa::path::{
            PathElementError, parse_path_element, serialize_path_element,
        };
        pub use crate::merge::ssa::server::{
            ApplyOutcome, ApplyRequest, decode_managed_fields, server_side_apply,
        };
        pub use crate::merge::ssa::updater::{ManagedFields, Updater, UpdaterError};
        pub use crate::merge::ssa::{Schema, Set, TypeRef, Typed, path_string, value};
    }
}
