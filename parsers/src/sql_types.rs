//! The DuckDB column type of an Arrow column: what DuckDB itself gives a column
//! of that type when it reads the batches, so a table declared empty (an event
//! type enabled but never seen) has the same columns as one read from its rows.

use arrow_schema::DataType;

/// None for a type the parsers never emit.
pub fn duckdb_type(t: &DataType) -> Option<String> {
    let simple = match t {
        DataType::Int8 => "TINYINT",
        DataType::Int16 => "SMALLINT",
        DataType::Int32 => "INTEGER",
        DataType::Int64 => "BIGINT",
        DataType::UInt8 => "UTINYINT",
        DataType::UInt16 => "USMALLINT",
        DataType::UInt32 => "UINTEGER",
        DataType::UInt64 => "UBIGINT",
        DataType::Boolean => "BOOLEAN",
        DataType::Float64 => "DOUBLE",
        DataType::Utf8 | DataType::LargeUtf8 => "VARCHAR",
        DataType::Binary | DataType::LargeBinary => "BLOB",
        DataType::List(f) | DataType::LargeList(f) => return duckdb_type(f.data_type()).map(|inner| inner + "[]"),
        DataType::Dictionary(_, value) => return duckdb_type(value),
        _ => return None,
    };
    Some(simple.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::Field;
    use std::sync::Arc;

    #[test]
    fn lists_and_dictionaries_take_their_values_type() {
        assert_eq!(duckdb_type(&DataType::UInt64).as_deref(), Some("UBIGINT"));
        let list = DataType::List(Arc::new(Field::new("item", DataType::UInt32, true)));
        assert_eq!(duckdb_type(&list).as_deref(), Some("UINTEGER[]"));
        let dict = DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8));
        assert_eq!(duckdb_type(&dict).as_deref(), Some("VARCHAR"));
        assert_eq!(duckdb_type(&DataType::Float16), None);
    }
}
