# ply's tasks. `just --list` shows them.

set shell := ["bash", "-euo", "pipefail", "-c"]

shared := justfile_directory() / ".." / "shared"

# Run every test (the README's test command).
test:
    cargo test

# Formatting and lints, as CI runs them.
lint:
    cargo fmt --check
    cargo clippy --all-targets -- -D warnings

# The conformance runners of ../shared, with the CI floors.
conformance:
    cargo build --release
    .ci/conformance

# The whole CI script.
ci:
    bash .ci/run
