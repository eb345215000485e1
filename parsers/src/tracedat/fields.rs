//! Per-field decoders: each field of an event format becomes one of these,
//! holding its column, so decoding an event is one match per field.

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, StringBuilder};
use arrow_array::ArrayRef;
use std::sync::Arc;

use crate::bytes::Endian;
use crate::columns::{int_type, push_text, IntListCol, Ints};
use crate::format::{Elem, FieldDef, FieldKind};

pub enum FieldCol {
    W1 {
        off: usize,
        col: Ints<u8>,
    },
    W2 {
        off: usize,
        col: Ints<u16>,
    },
    W4 {
        off: usize,
        col: Ints<u32>,
    },
    W8 {
        off: usize,
        col: Ints<u64>,
    },
    Bool {
        off: usize,
        col: BooleanBuilder,
    },
    /// Static `char[len]`.
    Str {
        off: usize,
        len: usize,
        col: StringBuilder,
    },
    /// `__data_loc` / `__rel_loc` text; `rel_base` is added to the offset
    /// (the end of the field for `__rel_loc`, 0 otherwise).
    DynStr {
        off: usize,
        rel_base: usize,
        col: StringBuilder,
    },
    TailStr {
        off: usize,
        col: StringBuilder,
    },
    Array {
        off: usize,
        bytes: usize,
        elem: Elem,
        col: IntListCol,
    },
    DynArray {
        off: usize,
        rel_base: usize,
        elem: Elem,
        col: IntListCol,
    },
    TailArray {
        off: usize,
        elem: Elem,
        col: IntListCol,
    },
    Bytes {
        off: usize,
        len: usize,
        col: BinaryBuilder,
    },
}

#[inline(always)]
fn slice(p: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    p.get(off..off.checked_add(len)?)
}

#[inline(always)]
fn until_nul(b: &[u8]) -> &[u8] {
    match memchr::memchr(0, b) {
        Some(n) => &b[..n],
        None => b,
    }
}

/// The bytes a `__data_loc` word (`len << 16 | offset`) points to.
#[inline]
fn data_loc(p: &[u8], off: usize, rel_base: usize, e: Endian) -> Option<&[u8]> {
    let w = slice(p, off, 4)?;
    let loc = e.u32([w[0], w[1], w[2], w[3]]);
    slice(p, (loc & 0xffff) as usize + rel_base, (loc >> 16) as usize)
}

fn push_ints(col: &mut IntListCol, data: &[u8], elem: Elem, e: Endian) {
    let w = elem.size as usize;
    for chunk in data.chunks_exact(w) {
        col.push_value(e.uint(chunk, w));
    }
    col.end_list();
}

impl FieldCol {
    pub fn new(f: &FieldDef, cap: usize) -> FieldCol {
        let off = f.offset as usize;
        let text = || StringBuilder::with_capacity(cap, cap * 16);
        let rel = |relative: bool| if relative { off + f.size as usize } else { 0 };
        match &f.kind {
            FieldKind::Int { size, signed } => {
                let t = int_type(*size, *signed);
                match size {
                    1 => FieldCol::W1 { off, col: Ints::new(t, cap) },
                    2 => FieldCol::W2 { off, col: Ints::new(t, cap) },
                    4 => FieldCol::W4 { off, col: Ints::new(t, cap) },
                    _ => FieldCol::W8 { off, col: Ints::new(t, cap) },
                }
            }
            FieldKind::Bool => FieldCol::Bool { off, col: BooleanBuilder::with_capacity(cap) },
            FieldKind::Str { len } => FieldCol::Str { off, len: *len as usize, col: text() },
            FieldKind::DynStr { relative } => FieldCol::DynStr { off, rel_base: rel(*relative), col: text() },
            FieldKind::TailStr => FieldCol::TailStr { off, col: text() },
            FieldKind::Array { elem, count } => FieldCol::Array {
                off,
                bytes: *count as usize * elem.size as usize,
                elem: *elem,
                col: IntListCol::new(elem.size, elem.signed, cap),
            },
            FieldKind::DynArray { elem, relative } => {
                FieldCol::DynArray { off, rel_base: rel(*relative), elem: *elem, col: IntListCol::new(elem.size, elem.signed, cap) }
            }
            FieldKind::TailArray { elem } => FieldCol::TailArray { off, elem: *elem, col: IntListCol::new(elem.size, elem.signed, cap) },
            FieldKind::Bytes { len } => FieldCol::Bytes { off, len: *len as usize, col: BinaryBuilder::with_capacity(cap, cap * 8) },
        }
    }

    /// Decode this field of payload `p`. Returns false (and appends NULL)
    /// when the field does not fit in the payload.
    #[inline]
    pub fn decode(&mut self, p: &[u8], e: Endian) -> bool {
        match self {
            FieldCol::W1 { off, col } => match p.get(*off) {
                Some(&v) => col.push(v),
                None => return push_null(self),
            },
            FieldCol::W2 { off, col } => match slice(p, *off, 2) {
                Some(b) => col.push(e.u16([b[0], b[1]])),
                None => return push_null(self),
            },
            FieldCol::W4 { off, col } => match slice(p, *off, 4) {
                Some(b) => col.push(e.u32([b[0], b[1], b[2], b[3]])),
                None => return push_null(self),
            },
            FieldCol::W8 { off, col } => match slice(p, *off, 8) {
                Some(b) => col.push(e.u64([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])),
                None => return push_null(self),
            },
            FieldCol::Bool { off, col } => match p.get(*off) {
                Some(&v) => col.append_value(v != 0),
                None => return push_null(self),
            },
            FieldCol::Str { off, len, col } => match slice(p, *off, *len) {
                Some(b) => push_text(col, until_nul(b)),
                None => return push_null(self),
            },
            FieldCol::DynStr { off, rel_base, col } => match data_loc(p, *off, *rel_base, e) {
                Some(b) => push_text(col, until_nul(b)),
                None => return push_null(self),
            },
            FieldCol::TailStr { off, col } => match p.get(*off..) {
                Some(b) => push_text(col, until_nul(b)),
                None => return push_null(self),
            },
            FieldCol::Array { off, bytes, elem, col } => match slice(p, *off, *bytes) {
                Some(b) => push_ints(col, b, *elem, e),
                None => return push_null(self),
            },
            FieldCol::DynArray { off, rel_base, elem, col } => match data_loc(p, *off, *rel_base, e) {
                Some(b) => push_ints(col, b, *elem, e),
                None => return push_null(self),
            },
            FieldCol::TailArray { off, elem, col } => match p.get(*off..) {
                Some(b) => push_ints(col, b, *elem, e),
                None => return push_null(self),
            },
            FieldCol::Bytes { off, len, col } => match slice(p, *off, *len) {
                Some(b) => col.append_value(b),
                None => return push_null(self),
            },
        }
        true
    }

    pub fn finish(&mut self) -> ArrayRef {
        match self {
            FieldCol::W1 { col, .. } => col.finish(),
            FieldCol::W2 { col, .. } => col.finish(),
            FieldCol::W4 { col, .. } => col.finish(),
            FieldCol::W8 { col, .. } => col.finish(),
            FieldCol::Bool { col, .. } => Arc::new(col.finish()),
            FieldCol::Str { col, .. } | FieldCol::DynStr { col, .. } | FieldCol::TailStr { col, .. } => Arc::new(col.finish()),
            FieldCol::Array { col, .. } | FieldCol::DynArray { col, .. } | FieldCol::TailArray { col, .. } => col.finish(),
            FieldCol::Bytes { col, .. } => Arc::new(col.finish()),
        }
    }
}

#[cold]
fn push_null(f: &mut FieldCol) -> bool {
    match f {
        FieldCol::W1 { col, .. } => col.push_null(),
        FieldCol::W2 { col, .. } => col.push_null(),
        FieldCol::W4 { col, .. } => col.push_null(),
        FieldCol::W8 { col, .. } => col.push_null(),
        FieldCol::Bool { col, .. } => col.append_null(),
        FieldCol::Str { col, .. } | FieldCol::DynStr { col, .. } | FieldCol::TailStr { col, .. } => col.append_null(),
        FieldCol::Array { col, .. } | FieldCol::DynArray { col, .. } | FieldCol::TailArray { col, .. } => col.push_null(),
        FieldCol::Bytes { col, .. } => col.append_null(),
    }
    false
}
