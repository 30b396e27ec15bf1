-- The fleet's tables as views over the directory `asof export STORE… --format parquet --out DIR`
-- wrote (docs/fleet.md). Set the directory first, then read this file:
--
--   duckdb -c "SET VARIABLE fleet = 'DIR'" -c ".read docs/fleet/tables.sql" -c ".read docs/fleet/misleading-sources.sql"
--
-- Each view reads every incident's file of its table; `incident` comes from the Hive
-- partition (incident=<id>) each file sits in.
CREATE OR REPLACE VIEW incidents AS
  FROM read_parquet(getvariable('fleet') || '/incidents/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW agents AS
  FROM read_parquet(getvariable('fleet') || '/agents/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW topics AS
  FROM read_parquet(getvariable('fleet') || '/topics/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW evidence AS
  FROM read_parquet(getvariable('fleet') || '/evidence/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW events AS
  FROM read_parquet(getvariable('fleet') || '/events/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW versions AS
  FROM read_parquet(getvariable('fleet') || '/versions/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW answers AS
  FROM read_parquet(getvariable('fleet') || '/answers/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW agreement AS
  FROM read_parquet(getvariable('fleet') || '/agreement/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW influence AS
  FROM read_parquet(getvariable('fleet') || '/influence/*/*.parquet', hive_partitioning = true);
CREATE OR REPLACE VIEW outcomes AS
  FROM read_parquet(getvariable('fleet') || '/outcomes/*/*.parquet', hive_partitioning = true);
