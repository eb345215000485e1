//! Parser for the tracefs event format descriptions embedded in trace.dat
//! (`events/<system>/<event>/format`, plus `header_page`).
//!
//! A description looks like:
//!
//! ```text
//! name: writeback_dirty_folio
//! ID: 1009
//! format:
//! 	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
//! 	...
//! 	field:char name[32];	offset:8;	size:32;	signed:0;
//! 	field:ino_t ino;	offset:40;	size:8;	signed:0;
//!
//! print fmt: "bdi %s: ino=%lu index=%lu", REC->name, (unsigned long)REC->ino, REC->index
//! ```
//!
//! Each field becomes a [`FieldDef`] whose [`FieldKind`] says how to decode it
//! from an event payload.

pub mod ctype;

/// How a field's bytes are decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldKind {
    /// Integer of 1, 2, 4 or 8 bytes.
    Int {
        size: u8,
        signed: bool,
    },
    /// `bool` (1 byte).
    Bool,
    /// Static `char name[N]`: text up to the first NUL.
    Str {
        len: u32,
    },
    /// Static array of integers, e.g. `unsigned long args[6]`.
    Array {
        elem: Elem,
        count: u32,
    },
    /// `__data_loc char[] name` / `__rel_loc char[] name`: text stored after
    /// the fixed part; the field holds a u32 `(len << 16) | offset`.
    DynStr {
        relative: bool,
    },
    /// `__data_loc T[] name` for non-char T: an array of T.
    DynArray {
        elem: Elem,
        relative: bool,
    },
    /// Trailing flexible array with size 0 (`char buf[]` in ftrace `print`):
    /// runs from its offset to the end of the record.
    TailStr,
    TailArray {
        elem: Elem,
    },
    /// Anything else (structs, odd sizes): the raw bytes.
    Bytes {
        len: u32,
    },
}

/// Element of an array field. `size` is 1, 2, 4 or 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elem {
    pub size: u8,
    pub signed: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDef {
    pub name: String,
    /// The C type as written, e.g. `unsigned long`, `__data_loc char[]`
    /// (for static arrays without the dimension, see `array_len`).
    pub type_name: String,
    /// The dimension of a static array as written (`32`, `sizeof(...)`, or
    /// empty for `buf[]`).
    pub array_len: Option<String>,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub kind: FieldKind,
}

impl FieldDef {
    /// The declared type with any array dimension: `char[32]`.
    pub fn declared_type(&self) -> String {
        match &self.array_len {
            Some(n) => format!("{}[{n}]", self.type_name),
            None => self.type_name.clone(),
        }
    }

    /// `common_*` fields are the header every event shares (type, flags,
    /// preempt count, pid; older kernels add `common_lock_depth`, some
    /// vendors `common_tgid`).
    pub fn is_common(&self) -> bool {
        self.name.starts_with("common_")
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventFormat {
    pub id: u32,
    pub system: String,
    pub name: String,
    pub fields: Vec<FieldDef>,
    pub print_fmt: String,
}

impl EventFormat {
    pub fn field(&self, name: &str) -> Option<&FieldDef> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// Longest identifier we accept; a format with a longer name is corrupt.
const MAX_NAME: usize = 256;
/// No field reaches past this (the largest ring-buffer page we accept).
pub const MAX_EVENT_BYTES: u64 = 1 << 24;
/// Most fields an event format may have (real ones have a few dozen).
pub const MAX_FIELDS: usize = 1024;

/// Parse one event format description. `long_size` is the traced kernel's
/// `sizeof(long)` (4 or 8), needed for dynamic arrays of `long`.
pub fn parse_event_format(text: &str, system: &str, long_size: u8) -> Result<EventFormat, String> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(v) = t.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = t.strip_prefix("ID:") {
            id = Some(v.trim().parse::<u32>().map_err(|_| format!("bad event ID {:?}", v.trim()))?);
        } else if t.starts_with("field:") || t.starts_with("field ") {
            if fields.len() == MAX_FIELDS {
                return Err(format!("more than {MAX_FIELDS} fields"));
            }
            fields.push(parse_field_line(t, long_size)?);
        } else if let Some(v) = t.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        }
    }
    let name = name.ok_or("format has no name: line")?;
    if name.is_empty() || name.len() > MAX_NAME {
        return Err(format!("bad event name of {} bytes", name.len()));
    }
    let id = id.ok_or_else(|| format!("format of {name} has no ID: line"))?;
    if system == "ftrace" && name == "kernel_stack" {
        stack_runs_to_record_end(&mut fields);
    }
    Ok(EventFormat { id, system: system.to_string(), name, fields, print_fmt })
}

/// `ftrace:kernel_stack` (`trace-cmd record -T`, the `stacktrace` option) declares
/// `unsigned long caller[8]; offset:16; size:64;`, but the kernel writes `size`
/// entries, however many the stack had: a record of `size=7` is 16 + 7 * 8 = 72 bytes
/// long, one of `size=19` 168 (`__ftrace_trace_stack`, kernel/trace/trace.c). So
/// `caller` runs from its offset to the record's end, as `trace-cmd report` prints it
/// (`trace-cmd report -R` reads the declared 64 bytes: the next event's header for
/// `size=7`, 8 of the 19 callers for `size=19`). An older kernel may end a stack with
/// ULONG_MAX (0xffffffffffffffff), kept here as recorded.
fn stack_runs_to_record_end(fields: &mut [FieldDef]) {
    for f in fields.iter_mut().filter(|f| f.name == "caller") {
        if let FieldKind::Array { elem, .. } = f.kind {
            f.kind = FieldKind::TailArray { elem };
        }
    }
}

/// Parse `field:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;`.
pub fn parse_field_line(line: &str, long_size: u8) -> Result<FieldDef, String> {
    let rest = line.strip_prefix("field:").or_else(|| line.strip_prefix("field ")).ok_or_else(|| format!("not a field line: {line:?}"))?;
    let mut parts = rest.split(';');
    let decl = parts.next().unwrap_or("").trim();
    let mut offset = None;
    let mut size = None;
    let mut signed = None;
    for p in parts {
        let p = p.trim();
        if let Some((k, v)) = p.split_once(':') {
            let v = v.trim();
            let n = || v.parse::<u32>().map_err(|_| format!("bad {k} {v:?} in {line:?}"));
            match k.trim() {
                "offset" => offset = Some(n()?),
                "size" => size = Some(n()?),
                "signed" => signed = Some(n()? != 0),
                _ => {}
            }
        }
    }
    let offset = offset.ok_or_else(|| format!("field without offset: {line:?}"))?;
    let size = size.ok_or_else(|| format!("field without size: {line:?}"))?;
    // An event lives in one ring-buffer page (at most 16 MiB, see header.rs).
    if offset as u64 + size as u64 > MAX_EVENT_BYTES {
        return Err(format!("field at offset {offset} of {size} bytes lies beyond any event ({MAX_EVENT_BYTES} bytes)"));
    }
    let (type_name, name, array) = split_declaration(decl)?;
    let signed = signed.unwrap_or_else(|| ctype::scalar_type(&type_name, long_size).is_some_and(|(_, s)| s));
    let kind = classify(&type_name, array.as_deref(), size, signed, long_size);
    Ok(FieldDef { name, type_name, array_len: array, offset, size, signed, kind })
}

/// Split `unsigned long args[6]` into (`unsigned long`, `args`, Some("6")),
/// `__data_loc char[] name` into (`__data_loc char[]`, `name`, None).
fn split_declaration(decl: &str) -> Result<(String, String, Option<String>), String> {
    let decl = strip_attributes(decl);
    let decl = decl.trim();
    let (head, array) = match decl.strip_suffix(']') {
        Some(d) if !decl.starts_with("__data_loc") && !decl.starts_with("__rel_loc") => {
            let open = d.rfind('[').ok_or_else(|| format!("unbalanced [ in {decl:?}"))?;
            (&d[..open], Some(d[open + 1..].trim().to_string()))
        }
        _ => (decl, None),
    };
    let head = head.trim_end();
    // The name follows the last blank or `*`, which may be a multi-byte
    // character (U+00A0 is whitespace too): split after its last byte.
    let split = head
        .char_indices()
        .rev()
        .find(|&(_, c)| c.is_whitespace() || c == '*')
        .map(|(i, c)| i + c.len_utf8())
        .ok_or_else(|| format!("no type in field declaration {decl:?}"))?;
    let name = head[split..].to_string();
    let type_name = head[..split].trim().to_string();
    if name.is_empty() || name.len() > MAX_NAME || type_name.is_empty() {
        return Err(format!("bad field declaration {decl:?}"));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("bad field name {name:?}"));
    }
    Ok((type_name, name, array))
}

/// Drop `__attribute__((user))` and similar annotations.
fn strip_attributes(decl: &str) -> String {
    let mut out = decl.to_string();
    while let Some(start) = out.find("__attribute__") {
        let bytes = out.as_bytes();
        let mut depth = 0usize;
        let mut end = start + "__attribute__".len();
        while end < bytes.len() {
            match bytes[end] {
                b'(' => depth += 1,
                b')' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end += 1;
                        break;
                    }
                }
                _ => {}
            }
            end += 1;
        }
        out.replace_range(start..end.min(out.len()), " ");
    }
    out
}

fn classify(type_name: &str, array: Option<&str>, size: u32, signed: bool, long_size: u8) -> FieldKind {
    for (prefix, relative) in [("__data_loc", false), ("__rel_loc", true)] {
        if let Some(elem_type) = type_name.strip_prefix(prefix) {
            let elem_type = elem_type.trim().trim_end_matches("[]").trim();
            if ctype::is_char_type(elem_type) {
                return FieldKind::DynStr { relative };
            }
            let elem = elem_of(elem_type, long_size);
            return FieldKind::DynArray { elem, relative };
        }
    }
    if let Some(len) = array {
        let elem_is_char = ctype::is_char_type(type_name);
        if size == 0 {
            return if elem_is_char { FieldKind::TailStr } else { FieldKind::TailArray { elem: elem_of(type_name, long_size) } };
        }
        if elem_is_char {
            return FieldKind::Str { len: size };
        }
        // The element size comes from the byte size and the count when the
        // count is a number; `__u8 saddr[sizeof(struct sockaddr_in6)]` has
        // no number, so fall back to the element type.
        let count = len.parse::<u32>().ok().filter(|&c| c > 0);
        let elem_size = match count {
            Some(c) if size % c == 0 => size / c,
            _ => ctype::scalar_type(type_name, long_size).map_or(1, |(s, _)| s as u32),
        };
        if matches!(elem_size, 1 | 2 | 4 | 8) && size % elem_size == 0 {
            let esigned = ctype::scalar_type(type_name, long_size).map_or(signed, |(_, s)| s);
            return FieldKind::Array { elem: Elem { size: elem_size as u8, signed: esigned }, count: size / elem_size };
        }
        return FieldKind::Bytes { len: size };
    }
    if type_name == "bool" || type_name == "_Bool" {
        if size == 1 {
            return FieldKind::Bool;
        }
    }
    match size {
        1 | 2 | 4 | 8 => FieldKind::Int { size: size as u8, signed },
        _ => FieldKind::Bytes { len: size },
    }
}

fn elem_of(type_name: &str, long_size: u8) -> Elem {
    match ctype::scalar_type(type_name, long_size) {
        Some((size, signed)) => Elem { size, signed },
        None => Elem { size: 1, signed: false },
    }
}

/// Layout of a ring-buffer page, from the `header_page` description:
/// a u64 timestamp, a `local_t commit` (whose size is the kernel's long),
/// then the event data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageHeader {
    pub timestamp_offset: u32,
    pub commit_offset: u32,
    pub commit_size: u8,
    pub data_offset: u32,
}

pub fn parse_header_page(text: &str) -> Result<PageHeader, String> {
    let mut ts = None;
    let mut commit = None;
    let mut data = None;
    for line in text.lines() {
        let t = line.trim();
        if !(t.starts_with("field:") || t.starts_with("field ")) {
            continue;
        }
        let f = parse_field_line(t, 8)?;
        match f.name.as_str() {
            "timestamp" => ts = Some(f),
            "commit" => commit = Some(f),
            "data" => data = Some(f),
            _ => {}
        }
    }
    let ts = ts.ok_or("header_page has no timestamp field")?;
    let commit = commit.ok_or("header_page has no commit field")?;
    let data = data.ok_or("header_page has no data field")?;
    if ts.size != 8 {
        return Err(format!("header_page timestamp is {} bytes, expected 8", ts.size));
    }
    if commit.size != 4 && commit.size != 8 {
        return Err(format!("header_page commit is {} bytes", commit.size));
    }
    // The timestamp and commit word sit in front of the data.
    if ts.offset as u64 + 8 > data.offset as u64 || commit.offset as u64 + commit.size as u64 > data.offset as u64 {
        return Err(format!(
            "header_page fields overlap the data (timestamp at {}, commit at {}, data at {})",
            ts.offset, commit.offset, data.offset
        ));
    }
    Ok(PageHeader { timestamp_offset: ts.offset, commit_offset: commit.offset, commit_size: commit.size as u8, data_offset: data.offset })
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIRTY_FOLIO: &str = "name: writeback_dirty_folio
ID: 1009
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;

\tfield:char name[32];\toffset:8;\tsize:32;\tsigned:0;
\tfield:ino_t ino;\toffset:40;\tsize:8;\tsigned:0;
\tfield:unsigned long index;\toffset:48;\tsize:8;\tsigned:0;

print fmt: \"bdi %s: ino=%lu index=%lu\", REC->name, (unsigned long)REC->ino, REC->index
";

    #[test]
    fn parses_writeback_dirty_folio() {
        let f = parse_event_format(DIRTY_FOLIO, "writeback", 8).unwrap();
        assert_eq!(f.id, 1009);
        assert_eq!(f.name, "writeback_dirty_folio");
        assert_eq!(f.fields.len(), 7);
        assert_eq!(f.fields[4].kind, FieldKind::Str { len: 32 });
        assert_eq!(f.fields[5].kind, FieldKind::Int { size: 8, signed: false });
        assert!(f.fields[3].is_common());
        assert!(f.print_fmt.starts_with("\"bdi %s"));
    }

    #[test]
    fn kernel_stack_callers_run_to_the_record_end() {
        // The format of a 6.18 kernel, as `trace-cmd record -T` stores it.
        let text = "name: kernel_stack\nID: 4\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
                    \tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n";
        let f = parse_event_format(text, "ftrace", 8).unwrap();
        assert_eq!(f.fields[2].kind, FieldKind::TailArray { elem: Elem { size: 8, signed: false } });
        assert_eq!((f.fields[2].offset, f.fields[2].size), (16, 64)); // the declaration, as the file has it
        // The same declaration in another event keeps its fixed length.
        let other = parse_event_format(&text.replace("kernel_stack", "other_stack"), "ftrace", 8).unwrap();
        assert_eq!(other.fields[2].kind, FieldKind::Array { elem: Elem { size: 8, signed: false }, count: 8 });
    }

    #[test]
    fn dynamic_and_array_fields() {
        let k = |l: &str| parse_field_line(l, 8).unwrap();
        assert_eq!(k("field:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;").kind, FieldKind::DynStr { relative: false });
        assert_eq!(
            k("field:__data_loc unsigned long[] stack;\toffset:8;\tsize:4;\tsigned:0;").kind,
            FieldKind::DynArray { elem: Elem { size: 8, signed: false }, relative: false }
        );
        assert_eq!(k("field:__rel_loc char[] s;\toffset:8;\tsize:4;\tsigned:0;").kind, FieldKind::DynStr { relative: true });
        assert_eq!(
            k("field:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;").kind,
            FieldKind::Array { elem: Elem { size: 8, signed: false }, count: 6 }
        );
        assert_eq!(k("field:char buf[];\toffset:16;\tsize:0;\tsigned:1;").kind, FieldKind::TailStr);
        assert_eq!(
            k("field:__u8 saddr[sizeof(struct sockaddr_in6)];\toffset:8;\tsize:28;\tsigned:0;").kind,
            FieldKind::Array { elem: Elem { size: 1, signed: false }, count: 28 }
        );
        let p = k("field:const char * fmt;\toffset:8;\tsize:8;\tsigned:0;");
        assert_eq!((p.name.as_str(), p.kind), ("fmt", FieldKind::Int { size: 8, signed: false }));
        let p = k("field:void *ptr;\toffset:8;\tsize:8;\tsigned:0;");
        assert_eq!(p.name, "ptr");
        assert_eq!(k("field:bool sync;\toffset:8;\tsize:1;\tsigned:0;").kind, FieldKind::Bool);
        let u = k("field:const char __attribute__((user)) * filename;\toffset:16;\tsize:8;\tsigned:0;");
        assert_eq!(u.name, "filename");
    }

    /// Found by the `event_format` fuzz target: a non-breaking space
    /// (2 bytes in UTF-8) before the field name made us slice inside it.
    #[test]
    fn multibyte_blank_before_the_name() {
        let f = parse_field_line("field:char\u{a0}name;\toffset:8;\tsize:4;\tsigned:0;", 8).unwrap();
        assert_eq!((f.type_name.as_str(), f.name.as_str()), ("char", "name"));
        assert_eq!(parse_field_line("field:int\u{2003}x\u{a0};\toffset:8;\tsize:4;", 8).unwrap().name, "x");
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse_field_line("field:;\toffset:0;\tsize:2;", 8).is_err());
        assert!(parse_field_line("field:int x;\toffset:zz;\tsize:2;", 8).is_err());
        assert!(parse_event_format("hello", "x", 8).is_err());
    }

    #[test]
    fn header_page() {
        let h = parse_header_page(
            "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;
",
        )
        .unwrap();
        assert_eq!(h, PageHeader { timestamp_offset: 0, commit_offset: 8, commit_size: 8, data_offset: 16 });
    }
}
