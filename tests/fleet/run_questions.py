"""Runs every fleet question of docs/fleet/ in DuckDB over an export directory.

    python run_questions.py DIR docs/fleet

Prints one JSON object: for each question file, its columns and rows (numbers
as JSON numbers, NULL as null), and how long it took. Used by the fleet tests
and the fleet benchmark; the SQL is read from the files users read.
"""

import decimal
import json
import pathlib
import sys
import time

import duckdb


def value(v):
    if isinstance(v, decimal.Decimal):
        return float(v)
    return v


def main():
    out_dir, sql_dir = sys.argv[1], pathlib.Path(sys.argv[2])
    con = duckdb.connect()
    con.execute("SET VARIABLE fleet = '" + out_dir.replace("'", "''") + "'")
    con.execute((sql_dir / "tables.sql").read_text())
    answers = {}
    for path in sorted(sql_dir.glob("*.sql")):
        if path.name == "tables.sql":
            continue
        started = time.perf_counter()
        relation = con.sql(path.read_text())
        rows = relation.fetchall()
        answers[path.name] = {
            "columns": relation.columns,
            "rows": [[value(v) for v in row] for row in rows],
            "seconds": time.perf_counter() - started,
        }
    json.dump(answers, sys.stdout)


if __name__ == "__main__":
    main()
