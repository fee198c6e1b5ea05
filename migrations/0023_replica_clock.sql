-- The replica fence (src/db.ts, docs/consistency.md): one row whose `at` (ms since the epoch) the Worker raises on
-- the primary. A read replica that shows an `at` older than the fence bound is too far behind to gate a request.
CREATE TABLE replica_clock (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  at INTEGER NOT NULL
);
INSERT INTO replica_clock (id, at) VALUES (1, 0);
