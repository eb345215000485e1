//! Growable Arrow columns for decoded event fields.
//!
//! All integer columns, whatever their width, share one builder that keeps
//! native-endian bytes and turns them into a typed Arrow array at the end;
//! lists of integers do the same for their values. Text that is not valid
//! UTF-8 keeps its bytes visible as `\xNN` escapes.

use std::sync::Arc;

use arrow_array::builder::{BinaryBuilder, BooleanBuilder, StringBuilder};
use arrow_array::{make_array, ArrayRef, ListArray};
use arrow_buffer::{Buffer, NullBufferBuilder, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{DataType, Field};

/// Arrow type of an integer of `width` bytes.
pub fn int_type(width: u8, signed: bool) -> DataType {
    match (width, signed) {
        (1, true) => DataType::Int8,
        (2, true) => DataType::Int16,
        (4, true) => DataType::Int32,
        (8, true) => DataType::Int64,
        (1, false) => DataType::UInt8,
        (2, false) => DataType::UInt16,
        (4, false) => DataType::UInt32,
        _ => DataType::UInt64,
    }
}

/// Values of an integer column, stored at their width.
enum IntVals {
    W1(Vec<u8>),
    W2(Vec<u16>),
    W4(Vec<u32>),
    W8(Vec<u64>),
}

/// An integer column of any width (the sign only changes the Arrow type:
/// values are kept as two's-complement bits).
pub struct IntCol {
    dtype: DataType,
    values: IntVals,
    nulls: NullBufferBuilder,
}

impl IntCol {
    pub fn new(width: u8, signed: bool, capacity: usize) -> Self {
        let values = match width {
            1 => IntVals::W1(Vec::with_capacity(capacity)),
            2 => IntVals::W2(Vec::with_capacity(capacity)),
            4 => IntVals::W4(Vec::with_capacity(capacity)),
            _ => IntVals::W8(Vec::with_capacity(capacity)),
        };
        IntCol { dtype: int_type(width, signed), values, nulls: NullBufferBuilder::new(capacity) }
    }

    #[inline(always)]
    fn push_bits(&mut self, v: u64) {
        match &mut self.values {
            IntVals::W1(x) => x.push(v as u8),
            IntVals::W2(x) => x.push(v as u16),
            IntVals::W4(x) => x.push(v as u32),
            IntVals::W8(x) => x.push(v),
        }
    }

    #[inline(always)]
    pub fn push(&mut self, v: u64) {
        self.push_bits(v);
        self.nulls.append_non_null();
    }

    #[inline]
    pub fn push_null(&mut self) {
        self.push_bits(0);
        self.nulls.append_null();
    }

    pub fn len(&self) -> usize {
        match &self.values {
            IntVals::W1(x) => x.len(),
            IntVals::W2(x) => x.len(),
            IntVals::W4(x) => x.len(),
            IntVals::W8(x) => x.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn finish(&mut self) -> ArrayRef {
        let len = self.len();
        let buffer = match &mut self.values {
            IntVals::W1(x) => Buffer::from_vec(std::mem::take(x)),
            IntVals::W2(x) => Buffer::from_vec(std::mem::take(x)),
            IntVals::W4(x) => Buffer::from_vec(std::mem::take(x)),
            IntVals::W8(x) => Buffer::from_vec(std::mem::take(x)),
        };
        let data = ArrayData::builder(self.dtype.clone()).len(len).add_buffer(buffer).nulls(self.nulls.finish());
        // The layout (one buffer of len values of the type's width) is
        // checked by build().
        make_array(data.build().expect("integer column layout"))
    }
}

/// A list-of-integers column.
pub struct IntListCol {
    elem: IntCol,
    offsets: Vec<i32>,
    nulls: NullBufferBuilder,
    item: Arc<Field>,
}

impl IntListCol {
    pub fn new(width: u8, signed: bool, capacity: usize) -> Self {
        let mut offsets = Vec::with_capacity(capacity + 1);
        offsets.push(0);
        IntListCol {
            elem: IntCol::new(width, signed, capacity),
            offsets,
            nulls: NullBufferBuilder::new(capacity),
            item: Arc::new(Field::new("item", int_type(width, signed), true)),
        }
    }

    pub fn data_type(width: u8, signed: bool) -> DataType {
        DataType::List(Arc::new(Field::new("item", int_type(width, signed), true)))
    }

    #[inline]
    pub fn push_value(&mut self, v: u64) {
        self.elem.push(v);
    }

    /// Close the list started after the previous `end_list`.
    #[inline]
    pub fn end_list(&mut self) {
        self.offsets.push(self.elem.len() as i32);
        self.nulls.append_non_null();
    }

    #[inline]
    pub fn push_null(&mut self) {
        self.offsets.push(self.elem.len() as i32);
        self.nulls.append_null();
    }

    pub fn finish(&mut self) -> ArrayRef {
        let values = self.elem.finish();
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        let offsets = OffsetBuffer::new(ScalarBuffer::from(offsets));
        Arc::new(ListArray::new(self.item.clone(), offsets, values, self.nulls.finish()))
    }
}

/// Append `bytes` as text: valid UTF-8 as is, otherwise each byte that is
/// not part of valid UTF-8 as `\xNN` (so nothing is silently replaced).
pub fn push_text(b: &mut StringBuilder, bytes: &[u8]) {
    match std::str::from_utf8(bytes) {
        Ok(s) => b.append_value(s),
        Err(_) => b.append_value(escape_invalid_utf8(bytes)),
    }
}

pub fn escape_invalid_utf8(mut bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(bytes.len() + 8);
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (good, bad) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len());
                for byte in &bad[..n] {
                    let _ = write!(out, "\\x{byte:02x}");
                }
                bytes = &bad[n..];
            }
        }
    }
}

/// A column of any kind the decoders produce.
pub enum Column {
    Int(IntCol),
    Bool(BooleanBuilder),
    Text(StringBuilder),
    IntList(IntListCol),
    Bytes(BinaryBuilder),
}

impl Column {
    pub fn finish(&mut self) -> ArrayRef {
        match self {
            Column::Int(c) => c.finish(),
            Column::Bool(c) => Arc::new(c.finish()),
            Column::Text(c) => Arc::new(c.finish()),
            Column::IntList(c) => c.finish(),
            Column::Bytes(c) => Arc::new(c.finish()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Array, Int16Array, UInt64Array};

    #[test]
    fn ints_of_any_width() {
        let mut c = IntCol::new(2, true, 4);
        c.push((-5i64) as u64);
        c.push_null();
        c.push(7);
        let a = c.finish();
        let a = a.as_any().downcast_ref::<Int16Array>().unwrap();
        assert_eq!(a.value(0), -5);
        assert!(a.is_null(1));
        assert_eq!(a.value(2), 7);
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn lists() {
        let mut l = IntListCol::new(8, false, 2);
        l.push_value(1);
        l.push_value(2);
        l.end_list();
        l.push_null();
        l.end_list();
        let a = l.finish();
        let a = a.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(a.len(), 3);
        let v = a.value(0);
        assert_eq!(v.as_any().downcast_ref::<UInt64Array>().unwrap().values(), &[1, 2]);
        assert!(a.is_null(1));
        assert_eq!(a.value(2).len(), 0);
    }

    #[test]
    fn escapes_bad_utf8() {
        assert_eq!(escape_invalid_utf8(b"ab\xffc"), "ab\\xffc");
        assert_eq!(escape_invalid_utf8("é".as_bytes()), "é");
    }
}

/// An integer column of one native width, for the hot decode path (no
/// per-value width dispatch).
pub struct Ints<T: arrow_buffer::ArrowNativeType> {
    dtype: DataType,
    values: Vec<T>,
    nulls: NullBufferBuilder,
}

impl<T: arrow_buffer::ArrowNativeType> Ints<T> {
    pub fn new(dtype: DataType, capacity: usize) -> Self {
        Ints { dtype, values: Vec::with_capacity(capacity), nulls: NullBufferBuilder::new(capacity) }
    }

    #[inline(always)]
    pub fn push(&mut self, v: T) {
        self.values.push(v);
        self.nulls.append_non_null();
    }

    #[inline]
    pub fn push_null(&mut self) {
        self.values.push(T::default());
        self.nulls.append_null();
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    pub fn finish(&mut self) -> ArrayRef {
        let len = self.values.len();
        let buffer = Buffer::from_vec(std::mem::take(&mut self.values));
        let data = ArrayData::builder(self.dtype.clone()).len(len).add_buffer(buffer).nulls(self.nulls.finish());
        make_array(data.build().expect("integer column layout"))
    }
}
