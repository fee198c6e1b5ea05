import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { expect } from "vitest";
import { api } from "./helpers";

/** Runs every pending outbox alarm, then walks the checker's pages and expects no difference. */
export async function expectConsistent(): Promise<number> {
  const ids = await env.DB.prepare("SELECT id FROM workspaces UNION SELECT workspace_id FROM workspace_names").all<{ id: string }>();
  for (const { id } of ids.results) await runDurableObjectAlarm(env.WORKSPACES.getByName(id));
  let cursor = "";
  let checked = 0;
  for (;;) {
    const res = await api("GET", `/admin/consistency?page%5Bsize%5D=100&cursor=${encodeURIComponent(cursor)}`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
    checked += res.body.meta.checked;
    if (!res.body.meta["next-cursor"]) return checked;
    cursor = res.body.meta["next-cursor"];
  }
}
