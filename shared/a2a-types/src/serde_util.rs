//! Lenient readers shared by the wire types.

use serde::{Deserialize, Deserializer};

/// Reads a member whose `null` means "absent" (pydantic dumps, ProtoJSON defaults).
pub(crate) fn null_default<'de, D, T>(deserializer: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Ok(Option::<T>::deserialize(deserializer)?.unwrap_or_default())
}

/// `skip_serializing_if` for proto3 booleans (false is the default, so omitted).
pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}
