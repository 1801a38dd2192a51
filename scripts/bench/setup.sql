-- pgbench's side of `make bench`: the same rows the API writes, on the same database. A
-- sequence hands out derivation indexes (what an insert cannot avoid: a unique index).
CREATE SEQUENCE IF NOT EXISTS bench_index START 1000000000;
