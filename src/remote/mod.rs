//! Remote bases and files as the file systems see them: reading their URLs as kustomize does
//! (`url`) and the lock file that pins each to a commit and a tree, or a file to its hash
//! (`lock`). A leaf below `fs` (`fs::remote` reads the cache through it); fetching (network,
//! `git`, filling the cache: `ply fetch`) is the `fetch` room above the renderer.

pub(crate) mod lock;
pub(crate) mod url;

pub(crate) use url::{Remote, RepoSpec, classify, is_remote};
