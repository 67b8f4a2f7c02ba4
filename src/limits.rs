//! The limits one command keeps to on hostile input, as one value handed down with its options
//! (never global state): the YAML reader's (alias expansion, one document's size:
//! `yaml::limits`), the growth of a document under JSON 6902 `copy` operations
//! (`merge::json6902`) and the size of one render's output (`output`). Each can be raised by
//! a flag of `ply render`, `ply diff` and `ply patch` ([`LimitFlags`]); the defaults are ones
//! real manifests never reach. `docs/reliability.md` lists them.

use crate::yaml::limits::{EXPANSION_RATIO, ReaderLimits};

/// The default of [`Limits::json_patch_growth`]: 64 MiB.
pub(crate) const JSON_PATCH_GROWTH: usize = crate::merge::json6902::MAX_COPY_GROWTH;

/// The default of [`Limits::output_size`]: 1 GiB of rendered YAML.
pub(crate) const OUTPUT_SIZE: usize = 1 << 30;

/// The stack of every thread that reads, renders, patches or compares documents. Trees come
/// from the reader up to kustomize's nesting limits (10,000 levels of block collections at
/// increasing columns, each with a sequence at its key's column under it, then 10,000 of flow:
/// about 30,000 levels, `yaml::limits`), and the stages that walk them recurse once per level
/// (the reader, transformers' field walks, merges, the emitter, `ply diff`, dropping the tree),
/// at most a few hundred bytes a level in a release build and a few kilobytes in a debug one.
/// The stack is virtual memory, taken from the system only as deep documents touch it.
pub(crate) const STACK_SIZE: usize = 1 << 30;

/// A thread builder with [`STACK_SIZE`], for every thread that works on documents.
pub(crate) fn thread(name: &str) -> std::thread::Builder {
    std::thread::Builder::new()
        .name(name.into())
        .stack_size(STACK_SIZE)
}

/// Runs `f` on a thread with [`STACK_SIZE`] (the main thread's stack is the system's, usually
/// 8 MiB) and returns its result; a panic in `f` is resumed here. If the system cannot start
/// the thread, `f` runs on the caller's.
pub fn with_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    let f = std::sync::Mutex::new(Some(f));
    let take = || f.lock().ok().and_then(|mut f| f.take()).expect("run once");
    std::thread::scope(
        |scope| match thread("ply-main").spawn_scoped(scope, || take()()) {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => take()(),
        },
    )
}

/// Every limit of one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The reader's limits for resource files.
    pub reader: ReaderLimits,
    /// About how many bytes of memory a document may take after a JSON 6902 `copy`.
    pub json_patch_growth: usize,
    /// Bytes of YAML one render may write (all documents, or all files of `--output-dir`).
    pub output_size: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            reader: ReaderLimits {
                flagged: true,
                ..ReaderLimits::DEFAULT
            },
            json_patch_growth: JSON_PATCH_GROWTH,
            output_size: OUTPUT_SIZE,
        }
    }
}

/// The flags that raise (or lower) the limits.
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "limits on hostile input")]
pub(crate) struct LimitFlags {
    /// Scalars built through YAML aliases may total this many times the file's size (plus
    /// 1 MiB) before a file is refused as a YAML bomb.
    #[arg(long, value_name = "RATIO", default_value_t = EXPANSION_RATIO)]
    pub max_alias_expansion: usize,
    /// The most text one YAML document may hold once its aliases are expanded (bytes, or
    /// with a K, M or G suffix: 64M).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64M")]
    pub max_document_size: usize,
    #[command(flatten)]
    pub growth: GrowthFlag,
}

/// `--max-json-patch-growth`, also a flag of `ply patch`.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct GrowthFlag {
    /// The most memory a document may take after JSON 6902 `copy` operations (bytes, or
    /// with a K, M or G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "64M")]
    pub max_json_patch_growth: usize,
}

/// `--max-output-size`, a flag of `ply render` only.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct OutputFlag {
    /// The most YAML one render may write; past it nothing is written (bytes, or with a K,
    /// M or G suffix).
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "1G")]
    pub max_output_size: usize,
}

impl LimitFlags {
    /// The limits these flags set; the output size stays the default (only `ply render`
    /// takes [`OutputFlag`]).
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            reader: ReaderLimits {
                alias_ratio: self.max_alias_expansion,
                document_size: self.max_document_size,
                flagged: true,
            },
            json_patch_growth: self.growth.max_json_patch_growth,
            output_size: OUTPUT_SIZE,
        }
    }
}

/// `1048576`, `512K`, `64M`, `1G` (also `64Mi`, `64MiB`): binary units.
pub(crate) fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("iB")
        .or_else(|| t.strip_suffix('i'))
        .or_else(|| t.strip_suffix('B'))
        .unwrap_or(t);
    let (digits, shift) = match t.as_bytes().last() {
        Some(b'K' | b'k') => (&t[..t.len() - 1], 10),
        Some(b'M' | b'm') => (&t[..t.len() - 1], 20),
        Some(b'G' | b'g') => (&t[..t.len() - 1], 30),
        _ => (t, 0),
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| format!("`{s}` is not a size: write bytes, or a number with K, M or G"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert_eq!(parse_size("64Mi"), Ok(64 << 20));
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("99999999999999999999G").is_err());
    }

    #[test]
    fn flag_defaults_are_the_defaults() {
        #[derive(clap::Parser)]
        struct T {
            #[command(flatten)]
            l: LimitFlags,
            #[command(flatten)]
            o: OutputFlag,
        }
        let t = <T as clap::Parser>::parse_from(["t"]);
        assert_eq!(t.l.limits(), Limits::default());
        assert_eq!(t.o.max_output_size, OUTPUT_SIZE);
        let t = <T as clap::Parser>::parse_from(["t", "--max-json-patch-growth", "10K"]);
        assert_eq!(t.l.limits().json_patch_growth, 10 << 10);
    }
}
