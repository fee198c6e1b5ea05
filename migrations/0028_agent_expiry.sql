-- Agents gone for a day are removed when an agent registers (src/agents/agents.d1.ts, registerAgentRow): by last
-- ping, across pools.
CREATE INDEX agents_last_ping ON agents(last_ping_at);
