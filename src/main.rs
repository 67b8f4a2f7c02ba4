//! The `ply` binary: runs the command line and exits with its code. A closed stdout (as in
//! `ply render | head`) ends the process quietly with code 0.

/// mimalloc instead of the system allocator: rendering makes millions of small, short-lived
/// allocations (docs/performance.md, "Allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    // Rust ignores SIGPIPE, so a closed pipe surfaces as a write error; the writers in
    // `output` map that to a quiet exit.
    // Deep documents (kustomize reads 10,000 levels) go through recursive stages: the command
    // runs on a thread with a large stack (`limits::STACK_SIZE`).
    std::process::exit(ply::with_deep_stack(ply::run));
}
