-- Fair scheduling on a pool shared by several organisations (the default pool serves every one): when each
-- organisation was last handed a job by the pool. `jobs/next` offers the oldest job of the organisation served
-- longest ago (never first), so one tenant's queue cannot starve another's (src/runs/runs.d1.ts, queuedJobs).
-- `pool_key`: the pool's id, '' for the default pool.
CREATE TABLE agent_pool_turns (
  pool_key TEXT NOT NULL,
  organization_id TEXT NOT NULL,
  last_claimed_at TEXT NOT NULL,
  PRIMARY KEY (pool_key, organization_id)
);

CREATE TRIGGER agent_pool_turns_on_pool_delete AFTER DELETE ON agent_pools BEGIN
  DELETE FROM agent_pool_turns WHERE pool_key = OLD.id;
END;

CREATE TRIGGER agent_pool_turns_on_organization_delete AFTER DELETE ON organizations BEGIN
  DELETE FROM agent_pool_turns WHERE organization_id = OLD.external_id;
END;
