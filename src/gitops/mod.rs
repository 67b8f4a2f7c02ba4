//! GitOps controllers' view of a repository: the objects that tell a controller what to render
//! (Argo CD Applications), found in the repository and rendered as the controller renders them.

pub(crate) mod argo;
