//! The hasher of ply's in-memory maps: document maps (`yaml::Map`), the id indexes and the file
//! caches. std's default `SipHash` resists hash flooding but costs several times more per short
//! key; every key here comes from the user's own configuration, and a render looks up millions
//! of short keys (`metadata`, `name`, ids), so ply hashes them with a multiply-rotate hash in the
//! style of rustc's `FxHasher` (written here, no dependency), finished with a final mix so that
//! both the low bits (bucket index) and the high bits (hashbrown's control bytes) vary.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// Builds [`FastHasher`]s; zero-sized, so maps carry no hasher state.
pub(crate) type FastBuild = BuildHasherDefault<FastHasher>;

/// A `HashMap` with [`FastHasher`]; make one with `FastMap::default()`.
pub(crate) type FastMap<K, V> = HashMap<K, V, FastBuild>;

/// A `HashSet` with [`FastHasher`]; make one with `FastSet::default()`.
pub(crate) type FastSet<T> = HashSet<T, FastBuild>;

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

/// Word-at-a-time multiply-rotate hasher. Deterministic (no per-process key): output never
/// depends on iteration order of these maps, and tests may rely on it being stable.
#[derive(Default, Clone, Copy)]
pub struct FastHasher {
    state: u64,
}

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.state = (self.state.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut word = [0u8; 8];
            word[..rest.len()].copy_from_slice(rest);
            // The length keeps "a" and "a\0" apart.
            self.add(u64::from_le_bytes(word) ^ ((rest.len() as u64) << 59));
        }
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A final xor-shift-multiply: the multiply above leaves the low bits of short keys
        // poorly mixed, and hashbrown picks buckets with the low bits.
        let h = self.state ^ (self.state >> 29);
        let h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        h ^ (h >> 32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::{BuildHasher, Hash};

    fn hash_of<T: Hash + ?Sized>(t: &T) -> u64 {
        FastBuild::default().hash_one(t)
    }

    #[test]
    fn equal_keys_hash_equal_and_near_keys_differ() {
        assert_eq!(hash_of("metadata"), hash_of(&"metadata".to_string()));
        let keys = [
            "",
            "a",
            "a\0",
            "b",
            "ab",
            "ba",
            "name",
            "names",
            "metadata",
            "metadatb",
            "spec/template",
            "spec/templatf",
            "12345678",
            "123456789",
        ];
        let mut seen = FastSet::default();
        for k in keys {
            assert!(seen.insert(hash_of(k)), "collision for {k:?}");
        }
    }

    #[test]
    fn low_bits_spread_over_many_similar_keys() {
        // 4096 keys like `app-0017` into 1024 buckets by the low ten bits: no bucket should
        // hold more than a handful (a uniform hash gives about 4 per bucket, rarely over 14).
        let mut buckets = vec![0u32; 1024];
        for i in 0..4096 {
            let h = hash_of(&format!("app-{i:04}"));
            buckets[(h & 1023) as usize] += 1;
        }
        let max = buckets.iter().copied().max().unwrap_or(0);
        assert!(max <= 16, "a bucket got {max} of 4096 keys");
        // The top seven bits (hashbrown's control byte) vary too.
        let tops: FastSet<u64> = (0..4096)
            .map(|i| hash_of(&format!("app-{i:04}")) >> 57)
            .collect();
        assert!(
            tops.len() > 100,
            "only {} distinct top-7-bit values",
            tops.len()
        );
    }

    #[test]
    fn maps_work_as_maps() {
        let mut m: FastMap<String, usize> = FastMap::default();
        for i in 0..1000 {
            m.insert(format!("k{i}"), i);
        }
        assert_eq!(m.len(), 1000);
        assert_eq!(m.get("k999"), Some(&999));
        assert_eq!(m.get("k1000"), None);
    }
}
