//! Identifiers and clocks of table metadata: random UUIDs (version 4) and
//! snapshot ids, and the time in milliseconds.

use std::{
    hash::{BuildHasher, Hasher},
    time::{SystemTime, UNIX_EPOCH},
};

/// A random 64-bit value (a process-random hasher's output over `salt`
/// and the time).
pub(crate) fn random_u64(salt: u64) -> u64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(salt);
    if let Ok(t) = SystemTime::now().duration_since(UNIX_EPOCH) {
        h.write_u128(t.as_nanos());
    }
    h.write_u32(std::process::id());
    h.finish()
}

/// A random positive 63-bit id (a snapshot's).
pub(crate) fn random_id() -> i64 {
    i64::try_from(random_u64(3) >> 1).unwrap_or(1).max(1)
}

/// A random (version 4) UUID.
pub(crate) fn uuid() -> String {
    let (a, b) = (random_u64(1), random_u64(2));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..]
    )
}

/// Milliseconds since the epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn uuids_are_version_4_and_differ() {
        let (a, b) = (super::uuid(), super::uuid());
        assert_ne!(a, b);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert!(matches!(&a[19..20], "8" | "9" | "a" | "b"), "{a}");
    }
}
