"""Reads an export directory with pyarrow, a second Parquet reader.

    python read_with_pyarrow.py DIR

Prints one JSON object: per table, each column's Arrow type, the rows per
incident (the Hive partition, decoded), and the schema version every file's
metadata carries.
"""

import collections
import json
import pathlib
import sys

import pyarrow.dataset as ds
import pyarrow.parquet as pq


def main():
    root = pathlib.Path(sys.argv[1])
    tables = {}
    for table_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        dataset = ds.dataset(table_dir, format="parquet", partitioning="hive")
        table = dataset.to_table()
        rows = collections.Counter(table.column("incident").to_pylist())
        versions = sorted(
            {
                pq.read_metadata(f).metadata[b"asof.schema_version"].decode()
                for f in dataset.files
            }
        )
        tables[table_dir.name] = {
            "types": {f.name: str(f.type) for f in table.schema},
            "rows": dict(rows),
            "schema_versions": versions,
        }
    json.dump(tables, sys.stdout)


if __name__ == "__main__":
    main()
