//! Remote bases and files: reading their URLs as kustomize does (`url`), the lock file that
//! pins each to a commit and a tree, or a file to its hash (`lock`), and `ply fetch`, the one
//! command that uses the network (`fetch`: clones with the system `git`, downloads files with
//! `http`, into the cache). Rendering never comes here for more than the URL and the lock: it
//! reads the cache through `fs::remote`.

pub mod fetch;
pub mod http;
pub mod lock;
pub mod url;

pub use url::{Remote, RepoSpec, classify, is_remote};
