//! Key/value sources of generators: `literals`, `files` and env files, with kustomize's
//! parsing and validation rules (`api/kv/kv.go`). Pure text handling.
