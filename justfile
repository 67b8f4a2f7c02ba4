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

# The corpus tests that read ../shared (YAML round trip, server-side apply).
corpus:
    cargo test --test yaml_roundtrip -- --ignored
    cargo test --test ssa_conformance -- --ignored

# Regenerate the built-in schema table from ../shared/schema.
gen-schema:
    python3 tools/gen_schema.py

# Ask kubectl kustomize again how its own schema (Kubernetes 1.21.2) differs from the table
# for merging; rewrites src/schema/kustomize-kinds.txt and kustomize-replaced-lists.txt.
probe-kustomize-schema:
    python3 tools/probe_kustomize_merge.py

# Time ply render against kubectl kustomize on generated trees (see docs/performance.md).
bench *ARGS:
    tools/bench.sh {{ARGS}}

# Check that ply renders the generated 10- and 100-app trees byte-identical to kubectl kustomize.
bench-check:
    cargo build --release
    for n in 10 100; do \
      python3 {{shared}}/bench/gen_tree.py target/bench-trees/$n --apps $n --force >/dev/null; \
      cmp <(target/release/ply render target/bench-trees/$n) <(kubectl kustomize target/bench-trees/$n) \
        && echo "$n apps: byte-identical to kubectl kustomize"; \
    done

# Time the pull-request review (ply diff --base HEAD~1 --all, --changed-only) on a generated
# 1000-app tree in a temporary git repository, against two plain renders per overlay.
bench-review:
    tools/bench-review.sh
