//! Sizes of the C types that appear as array element types in event formats.
//!
//! Static arrays tell us their byte size and element count, so the element
//! size follows; `__data_loc`/`__rel_loc` dynamic arrays only name the element
//! type (`__data_loc unsigned long[] stack`), so we look it up here.
//! `long` depends on the traced kernel (`long_size`, from the file header).

/// Size in bytes and signedness of a scalar C type name, if we know it.
pub fn scalar_type(name: &str, long_size: u8) -> Option<(u8, bool)> {
    let t = normalise(name);
    if t.ends_with('*') {
        return Some((long_size, false));
    }
    let r = match t.as_str() {
        "char" | "signed char" | "s8" | "__s8" | "int8_t" => (1, true),
        "unsigned char" | "u8" | "__u8" | "uint8_t" | "bool" | "_Bool" => (1, false),
        "short" | "short int" | "signed short" | "s16" | "__s16" | "int16_t" => (2, true),
        "unsigned short" | "unsigned short int" | "u16" | "__u16" | "uint16_t" | "__le16" | "__be16" | "umode_t" => (2, false),
        "int" | "signed int" | "signed" | "s32" | "__s32" | "int32_t" | "pid_t" | "clockid_t" => (4, true),
        "unsigned int" | "unsigned" | "u32" | "__u32" | "uint32_t" | "__le32" | "__be32" | "gfp_t" | "dev_t" | "uid_t" | "gid_t"
        | "blk_opf_t" | "fmode_t" => (4, false),
        "long" | "long int" | "signed long" | "ssize_t" | "ptrdiff_t" | "intptr_t" => (long_size, true),
        "unsigned long" | "unsigned long int" | "size_t" | "uintptr_t" | "ino_t" | "pgoff_t" => (long_size, false),
        "long long" | "long long int" | "signed long long" | "s64" | "__s64" | "int64_t" | "loff_t" | "ktime_t" | "time64_t" => (8, true),
        "unsigned long long" | "unsigned long long int" | "u64" | "__u64" | "uint64_t" | "__le64" | "__be64" | "sector_t" | "blkcnt_t" => {
            (8, false)
        }
        _ => return None,
    };
    Some(r)
}

/// True for the element types whose arrays are text (`char name[32]`,
/// `__data_loc char[] name`). `u8`/`unsigned char` arrays are bytes, not text.
pub fn is_char_type(name: &str) -> bool {
    matches!(normalise(name).as_str(), "char" | "const char" | "signed char")
}

/// Collapse whitespace and drop qualifiers that do not change the layout.
fn normalise(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for word in name.split_whitespace() {
        if matches!(word, "const" | "volatile" | "enum" | "__user" | "__percpu") {
            continue;
        }
        if word == "*" || word.starts_with('*') {
            out.push('*');
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(scalar_type("unsigned long", 8), Some((8, false)));
        assert_eq!(scalar_type("unsigned long", 4), Some((4, false)));
        assert_eq!(scalar_type("const char *", 8), Some((8, false)));
        assert_eq!(scalar_type("s32", 8), Some((4, true)));
        assert_eq!(scalar_type("struct foo", 8), None);
        assert!(is_char_type("const char"));
        assert!(!is_char_type("u8"));
    }
}
