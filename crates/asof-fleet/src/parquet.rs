//! One flat table, built a row at a time and written as one Parquet file.
//!
//! The fleet's tables are flat: strings, integers, doubles, booleans, UTC
//! microsecond timestamps, and lists of strings (evidence ids). Each column
//! keeps its values and definition levels as rows come in; [`Table::write`]
//! hands them to the Parquet writer column by column, in one row group.
//!
//! ```text
//! nullable column      optional <type> name                 def 0 = null, 1 = value
//! required column      required <type> name                 no levels
//! list column          required group name (LIST) {          def 0 = empty list,
//!                        repeated group list {                   1 = an element;
//!                          required binary element (STRING)  rep 0 = a row's first,
//!                        } }                                     1 = the next ones
//! ```
//!
//! Strings of a column share one buffer; the writer gets slices of it, not a
//! copy per value.

use bytes::Bytes;
use parquet::basic::{Compression, LogicalType, Repetition, TimeUnit, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::Type;
use std::sync::Arc;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// UTF-8 text (`STRING`).
    Str,
    /// A signed 64-bit integer (`INT64`).
    Int,
    /// A double (`DOUBLE`).
    Float,
    /// A boolean.
    Bool,
    /// An instant: `INT64` microseconds since the Unix epoch, `TIMESTAMP(MICROS, UTC)`.
    Time,
    /// A list of strings, never null (an empty list instead).
    List,
}

/// A column of a table's schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// Its name, as the JSON outputs name the field.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// May hold nulls (lists never do).
    pub nullable: bool,
}

/// A column that never holds null.
pub const fn req(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        kind,
        nullable: false,
    }
}

/// A column that may hold null.
pub const fn opt(name: &'static str, kind: Kind) -> Column {
    Column {
        name,
        kind,
        nullable: true,
    }
}

/// A column's values as they come in.
#[derive(Debug)]
enum Values {
    Str { bytes: Vec<u8>, ends: Vec<usize> },
    Int(Vec<i64>),
    Float(Vec<f64>),
    Bool(Vec<bool>),
}

#[derive(Debug)]
struct Data {
    values: Values,
    /// Definition levels (nullable and list columns).
    defs: Vec<i16>,
    /// Repetition levels (list columns).
    reps: Vec<i16>,
}

/// A table being built: a schema and its columns' data.
#[derive(Debug)]
pub struct Table {
    schema: &'static [Column],
    data: Vec<Data>,
}

impl Table {
    /// An empty table of `schema`, filled one row at a time, one value per column in order.
    pub fn new(schema: &'static [Column]) -> Table {
        let data = schema
            .iter()
            .map(|c| Data {
                values: match c.kind {
                    Kind::Str | Kind::List => Values::Str {
                        bytes: Vec::new(),
                        ends: Vec::new(),
                    },
                    Kind::Int | Kind::Time => Values::Int(Vec::new()),
                    Kind::Float => Values::Float(Vec::new()),
                    Kind::Bool => Values::Bool(Vec::new()),
                },
                defs: Vec::new(),
                reps: Vec::new(),
            })
            .collect();
        Table { schema, data }
    }

    /// Starts a row: give every column a value, in the schema's order, then [`Row::end`].
    pub fn row(&mut self) -> Row<'_> {
        Row { table: self, at: 0 }
    }

    /// Writes the table as one Parquet file (one row group, Snappy) with
    /// `metadata` as the file's key-value metadata.
    pub fn write(
        &self,
        out: impl std::io::Write + Send,
        metadata: &[(&str, &str)],
    ) -> Result<(), ParquetError> {
        let fields = self
            .schema
            .iter()
            .map(|c| field(c).map(Arc::new))
            .collect::<Result<Vec<_>, _>>()?;
        let schema = Type::group_type_builder("schema")
            .with_fields(fields)
            .build()?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("asof {}", env!("CARGO_PKG_VERSION")))
            .set_key_value_metadata(Some(
                metadata
                    .iter()
                    .map(|(k, v)| KeyValue::new((*k).to_owned(), (*v).to_owned()))
                    .collect(),
            ))
            .build();
        let mut writer = SerializedFileWriter::new(out, Arc::new(schema), Arc::new(props))?;
        let mut group = writer.next_row_group()?;
        let mut columns = self.schema.iter().zip(&self.data);
        while let Some(mut writer) = group.next_column()? {
            let Some((column, data)) = columns.next() else {
                return Err(ParquetError::General("more columns than the schema".into()));
            };
            let defs = (column.nullable || column.kind == Kind::List).then_some(&data.defs[..]);
            let reps = (column.kind == Kind::List).then_some(&data.reps[..]);
            match &data.values {
                Values::Str { bytes, ends } => {
                    let all = Bytes::copy_from_slice(bytes);
                    let mut start = 0;
                    let values: Vec<ByteArray> = ends
                        .iter()
                        .map(|&end| {
                            let v = ByteArray::from(all.slice(start..end));
                            start = end;
                            v
                        })
                        .collect();
                    writer
                        .typed::<ByteArrayType>()
                        .write_batch(&values, defs, reps)?;
                }
                Values::Int(v) => {
                    writer.typed::<Int64Type>().write_batch(v, defs, reps)?;
                }
                Values::Float(v) => {
                    writer.typed::<DoubleType>().write_batch(v, defs, reps)?;
                }
                Values::Bool(v) => {
                    writer.typed::<BoolType>().write_batch(v, defs, reps)?;
                }
            }
            writer.close()?;
        }
        group.close()?;
        writer.close()?;
        Ok(())
    }
}

/// The Parquet type of a column.
fn field(c: &Column) -> Result<Type, ParquetError> {
    let repetition = match c.nullable {
        true => Repetition::OPTIONAL,
        false => Repetition::REQUIRED,
    };
    let string = |name: &str, repetition| {
        Type::primitive_type_builder(name, Physical::BYTE_ARRAY)
            .with_repetition(repetition)
            .with_logical_type(Some(LogicalType::String))
            .build()
    };
    let primitive = |physical| {
        Type::primitive_type_builder(c.name, physical)
            .with_repetition(repetition)
            .build()
    };
    match c.kind {
        Kind::Str => string(c.name, repetition),
        Kind::Int => primitive(Physical::INT64),
        Kind::Float => primitive(Physical::DOUBLE),
        Kind::Bool => primitive(Physical::BOOLEAN),
        Kind::Time => Type::primitive_type_builder(c.name, Physical::INT64)
            .with_repetition(repetition)
            .with_logical_type(Some(LogicalType::timestamp(true, TimeUnit::MICROS)))
            .build(),
        Kind::List => {
            let element = string("element", Repetition::REQUIRED)?;
            let list = Type::group_type_builder("list")
                .with_repetition(Repetition::REPEATED)
                .with_fields(vec![Arc::new(element)])
                .build()?;
            Type::group_type_builder(c.name)
                .with_repetition(Repetition::REQUIRED)
                .with_logical_type(Some(LogicalType::List))
                .with_fields(vec![Arc::new(list)])
                .build()
        }
    }
}

/// One row being filled, column by column in the schema's order.
///
/// A value of the wrong kind for its column is a bug in the table's
/// builder, not something input can cause: it panics, and every table's
/// builder is run by the tests.
pub struct Row<'a> {
    table: &'a mut Table,
    at: usize,
}

impl Row<'_> {
    fn next(&mut self, kind: Kind, null: bool) -> &mut Data {
        let column = self.table.schema.get(self.at).copied();
        let Some(column) = column else {
            panic!(
                "a row of {} columns was given more",
                self.table.schema.len()
            );
        };
        assert!(
            column.kind == kind || (kind == Kind::Int && column.kind == Kind::Time),
            "column `{}` holds {:?}, not {kind:?}",
            column.name,
            column.kind
        );
        assert!(
            !null || column.nullable,
            "column `{}` is not nullable",
            column.name
        );
        let data = &mut self.table.data[self.at];
        if column.nullable {
            data.defs.push(i16::from(!null));
        }
        self.at += 1;
        data
    }

    /// The next column's value: a string.
    pub fn str(mut self, v: &str) -> Self {
        push_str(&mut self.next(Kind::Str, false).values, v);
        self
    }

    /// The next column's value: a string, or null.
    pub fn opt_str(mut self, v: Option<&str>) -> Self {
        let data = self.next(Kind::Str, v.is_none());
        if let Some(v) = v {
            push_str(&mut data.values, v);
        }
        self
    }

    /// The next column's value: an int64.
    pub fn int(mut self, v: i64) -> Self {
        if let Values::Int(values) = &mut self.next(Kind::Int, false).values {
            values.push(v);
        }
        self
    }

    /// The next column's value: an int64, or null.
    pub fn opt_int(mut self, v: Option<i64>) -> Self {
        if let (Values::Int(values), Some(v)) = (&mut self.next(Kind::Int, v.is_none()).values, v) {
            values.push(v);
        }
        self
    }

    /// An instant in µs; `OPEN` (an open end) is null.
    pub fn time(mut self, v: i64) -> Self {
        let open = v == asof_core::time::OPEN;
        if let Values::Int(values) = &mut self.next(Kind::Time, open).values
            && !open
        {
            values.push(v);
        }
        self
    }

    /// The next column's value: a double.
    pub fn float(mut self, v: f64) -> Self {
        if let Values::Float(values) = &mut self.next(Kind::Float, false).values {
            values.push(v);
        }
        self
    }

    /// The next column's value: a double, or null.
    pub fn opt_float(mut self, v: Option<f64>) -> Self {
        if let (Values::Float(values), Some(v)) =
            (&mut self.next(Kind::Float, v.is_none()).values, v)
        {
            values.push(v);
        }
        self
    }

    /// The next column's value: a boolean.
    pub fn bool(mut self, v: bool) -> Self {
        if let Values::Bool(values) = &mut self.next(Kind::Bool, false).values {
            values.push(v);
        }
        self
    }

    /// The next column's value: a boolean, or null.
    pub fn opt_bool(mut self, v: Option<bool>) -> Self {
        if let (Values::Bool(values), Some(v)) = (&mut self.next(Kind::Bool, v.is_none()).values, v)
        {
            values.push(v);
        }
        self
    }

    /// The next column's value: a list of ids (empty, never null).
    pub fn list<'s>(mut self, items: impl IntoIterator<Item = &'s str>) -> Self {
        let data = self.next(Kind::List, false);
        let mut first = true;
        for item in items {
            push_str(&mut data.values, item);
            data.defs.push(1);
            data.reps.push(i16::from(!first));
            first = false;
        }
        if first {
            data.defs.push(0);
            data.reps.push(0);
        }
        self
    }

    /// Ends the row; every column must have had its value.
    pub fn end(self) {
        assert_eq!(
            self.at,
            self.table.schema.len(),
            "a row gave {} of {} columns",
            self.at,
            self.table.schema.len()
        );
    }
}

fn push_str(values: &mut Values, v: &str) {
    if let Values::Str { bytes, ends } = values {
        bytes.extend_from_slice(v.as_bytes());
        ends.push(bytes.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    const SCHEMA: &[Column] = &[
        req("id", Kind::Str),
        opt("note", Kind::Str),
        req("n", Kind::Int),
        opt("at", Kind::Time),
        req("p", Kind::Float),
        opt("ok", Kind::Bool),
        req("cites", Kind::List),
    ];

    /// What goes in comes back, nulls and empty lists included, read by the
    /// crate's own reader (the DuckDB and pyarrow tests read the real files).
    #[test]
    fn a_table_reads_back_as_written() {
        let mut t = Table::new(SCHEMA);
        t.row()
            .str("a")
            .opt_str(None)
            .int(1)
            .time(5)
            .float(0.5)
            .opt_bool(Some(true))
            .list(["E1", "E2"])
            .end();
        t.row()
            .str("b⏎")
            .opt_str(Some("x"))
            .int(-2)
            .time(asof_core::time::OPEN)
            .float(1.0)
            .opt_bool(None)
            .list([])
            .end();
        let mut bytes = Vec::new();
        t.write(&mut bytes, &[("asof.schema_version", "1")])
            .unwrap();
        let reader = SerializedFileReader::new(Bytes::from(bytes)).unwrap();
        let kv = reader
            .metadata()
            .file_metadata()
            .key_value_metadata()
            .unwrap();
        assert!(
            kv.iter()
                .any(|k| k.key == "asof.schema_version" && k.value.as_deref() == Some("1"))
        );
        let rows: Vec<String> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| r.unwrap().to_string())
            .collect();
        assert_eq!(rows.len(), 2);
        assert!(
            rows[0].contains("id: \"a\"") && rows[0].contains("note: null"),
            "{}",
            rows[0]
        );
        assert!(rows[0].contains("cites: [\"E1\", \"E2\"]"), "{}", rows[0]);
        assert!(
            rows[1].contains("at: null") && rows[1].contains("cites: []"),
            "{}",
            rows[1]
        );
        let first = reader.get_row_iter(None).unwrap().next().unwrap().unwrap();
        let at = first
            .get_column_iter()
            .find(|(n, _)| n.as_str() == "at")
            .unwrap()
            .1
            .clone();
        assert_eq!(at, Field::TimestampMicros(5));
    }

    #[test]
    #[should_panic(expected = "a row gave 1 of 7 columns")]
    fn a_short_row_is_a_bug() {
        let mut t = Table::new(SCHEMA);
        t.row().str("a").end();
    }
}
