// Renaming an organisation (PATCH /organizations/:name with a new `name`). Every row and workspace record
// names its organisation by the immutable id; the name lives in the organisations row alone, so a rename is one write
// that touches no workspace, and every response shows the new name at once.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createOrg, createWorkspace, makeOrgToken, makeTeam, makeUser } from "../fixtures";
import { ADMIN, api, expectConsistent, uniqueName } from "../helpers";

const rename = (from: string, name: string, token: string = ADMIN) =>
  api("PATCH", `/organizations/${from}`, { token, body: { data: { type: "organizations", attributes: { name } } } });
const orgName = () => uniqueName("org");

/** The index row of every workspace of the organisation (to show a rename leaves them as they were). */
async function indexRows(externalId: string) {
  return (
    await env.DB.prepare("SELECT id, name, version, doc FROM workspaces WHERE organization_id = ? ORDER BY id")
      .bind(externalId)
      .all<{ id: string; name: string; version: number; doc: string }>()
  ).results;
}

describe("renaming an organisation", () => {
  it("answers under the new name everywhere; the old name is 404; nothing of the workspaces is rewritten", async () => {
    const before = orgName();
    await createOrg(ADMIN, before);
    const shown = await api("GET", `/organizations/${before}`);
    const externalId = shown.body.data.attributes["external-id"] as string;
    const ws = await createWorkspace(before, { description: "d" }, ADMIN, {
      tags: { data: [{ type: "tags", attributes: { name: "flat" } }] },
      "tag-bindings": { data: [{ type: "tag-bindings", attributes: { key: "env", value: "prod" } }] },
    });
    const other = await createWorkspace(before);
    expect((await api("POST", `/workspaces/${other.id}/actions/lock`, { body: { reason: "r" } })).status).toBe(200);
    const project = await api("POST", `/organizations/${before}/projects`, { body: { data: { type: "projects", attributes: { name: "proj-1" } } } });
    const varset = await api("POST", `/organizations/${before}/varsets`, { body: { data: { type: "varsets", attributes: { name: "vs", global: true } } } });
    const pool = await api("POST", `/organizations/${before}/agent-pools`, { body: { data: { type: "agent-pools", attributes: { name: "pool" } } } });
    const team = await api("POST", `/organizations/${before}/teams`, { body: { data: { type: "teams", attributes: { name: "devs" } } } });
    const orgToken = await makeOrgToken(before);
    const rowsBefore = await indexRows(externalId);
    const recordBefore = (await env.WORKSPACES.getByName(ws.id).get()) as { ok: true; value: { version: number } };

    const after = orgName();
    const res = await rename(before, after);
    expect(res.status).toBe(200);
    expect(res.body.data.id).toBe(after);
    expect(res.body.data.attributes.name).toBe(after);
    expect(res.body.data.attributes["external-id"]).toBe(externalId);

    // The old name is gone at once; the new one shows the same organisation.
    expect((await api("GET", `/organizations/${before}`)).status).toBe(404);
    expect((await api("GET", `/organizations/${before}/workspaces`)).status).toBe(404);
    expect((await api("GET", `/organizations/${before}/workspaces/${ws.attributes.name}`)).status).toBe(404);
    const again = await api("GET", `/organizations/${after}`);
    expect(again.status).toBe(200);
    expect(again.body.data.attributes["external-id"]).toBe(externalId);

    // No workspace was visited: the index rows and the Durable Object's record are exactly as before.
    expect(await indexRows(externalId)).toEqual(rowsBefore);
    const recordAfter = (await env.WORKSPACES.getByName(ws.id).get()) as { ok: true; value: { version: number } };
    expect(recordAfter.value.version).toBe(recordBefore.value.version);

    // Workspaces show the new name in their organisation relationship and links, by id and by name.
    const byId = await api("GET", `/workspaces/${ws.id}?include=organization`);
    expect(byId.status).toBe(200);
    expect(byId.body.data.relationships.organization.data).toEqual({ id: after, type: "organizations" });
    expect(byId.body.data.links).toEqual({
      self: `/api/v2/organizations/${after}/workspaces/${ws.attributes.name}`,
      "self-html": `/app/${after}/workspaces/${ws.attributes.name}`,
    });
    expect(byId.body.included.map((r: { id: string; type: string }) => [r.type, r.id])).toEqual([["organizations", after]]);
    const byName = await api("GET", `/organizations/${after}/workspaces/${ws.attributes.name}`);
    expect(byName.status).toBe(200);
    expect(byName.body.data).toEqual(byId.body.data);
    expect(byName.body.data.attributes["tag-names"]).toEqual(["flat"]);

    // Lists under the new name: workspaces (count, search, tag filters), tags, projects, teams, varsets, pools.
    const list = await api("GET", `/organizations/${after}/workspaces`);
    expect(list.body.meta.pagination["total-count"]).toBe(2);
    expect(list.body.data.map((w: { id: string }) => w.id).sort()).toEqual([ws.id, other.id].sort());
    for (const w of list.body.data) expect(w.relationships.organization.data.id).toBe(after);
    const searched = await api("GET", `/organizations/${after}/workspaces?search%5Bname%5D=${encodeURIComponent(ws.attributes.name.slice(3))}`);
    expect(searched.body.data.map((w: { id: string }) => w.id)).toEqual([ws.id]);
    const tagged = await api("GET", `/organizations/${after}/workspaces?filter%5Btagged%5D%5B0%5D%5Bkey%5D=env&filter%5Btagged%5D%5B0%5D%5Bvalue%5D=prod`);
    expect(tagged.body.data.map((w: { id: string }) => w.id)).toEqual([ws.id]);
    const tags = await api("GET", `/organizations/${after}/tags`);
    expect(tags.body.data.map((t: { attributes: { name: string } }) => t.attributes.name)).toEqual(["flat"]);
    expect(tags.body.data[0].relationships.organization.data.id).toBe(after);
    const shownProject = await api("GET", `/projects/${project.body.data.id}`);
    expect(shownProject.body.data.relationships.organization.data.id).toBe(after);
    expect(shownProject.body.data.attributes["workspace-count"]).toBe(0);
    const projects = await api("GET", `/organizations/${after}/projects`);
    expect(projects.body.data.map((p: { attributes: { name: string } }) => p.attributes.name).sort()).toEqual(["Default Project", "proj-1"]);
    const teams = await api("GET", `/organizations/${after}/teams`);
    expect(teams.body.data.map((t: { attributes: { name: string } }) => t.attributes.name).sort()).toEqual(["devs", "owners"]);
    expect((await api("GET", `/teams/${team.body.data.id}`)).body.data.relationships.organization.data.id).toBe(after);
    const shownSet = await api("GET", `/varsets/${varset.body.data.id}`);
    expect(shownSet.body.data.relationships.organization.data.id).toBe(after);
    expect(shownSet.body.data.relationships.parent.data).toEqual({ id: after, type: "organizations" });
    expect((await api("GET", `/agent-pools/${pool.body.data.id}`)).body.data.relationships.organization.data.id).toBe(after);
    const memberships = await api("GET", `/organizations/${after}/organization-memberships`);
    expect(memberships.body.data.length).toBeGreaterThan(0);
    for (const m of memberships.body.data) expect(m.relationships.organization.data.id).toBe(after);

    // Tokens of the organisation keep working, and know it by its new name.
    expect((await api("GET", `/organizations/${after}`, { token: orgToken.token })).status).toBe(200);
    const details = await api("GET", "/account/details", { token: orgToken.token });
    expect(details.body.data.attributes.username).toBe(`api-org-${after}`);
    // Writes under the new name land in the same organisation (the lock, taken before, is still held).
    const created = await createWorkspace(after);
    expect(created.relationships.organization.data.id).toBe(after);
    expect((await api("GET", `/workspaces/${other.id}`)).body.data.attributes.locked).toBe(true);
    expect((await api("POST", `/workspaces/${other.id}/actions/unlock`)).status).toBe(200);
    await expectConsistent();
  });

  it("lets a new organisation take the old name; the two stay apart", async () => {
    const first = orgName();
    await createOrg(ADMIN, first);
    const kept = await createWorkspace(first, { name: "shared-name" });
    const renamed = orgName();
    expect((await rename(first, renamed)).status).toBe(200);
    await createOrg(ADMIN, first);
    // The new organisation has the name (and its own workspace of the same name), not the renamed one's workspaces.
    expect((await api("GET", `/organizations/${first}/workspaces`)).body.data).toEqual([]);
    const fresh = await createWorkspace(first, { name: "shared-name" });
    expect((await api("GET", `/workspaces/${fresh.id}`)).body.data.relationships.organization.data.id).toBe(first);
    expect((await api("GET", `/organizations/${first}/workspaces/shared-name`)).body.data.id).toBe(fresh.id);
    expect((await api("GET", `/organizations/${renamed}/workspaces/shared-name`)).body.data.id).toBe(kept.id);
    expect((await api("GET", `/workspaces/${kept.id}`)).body.data.relationships.organization.data.id).toBe(renamed);
    // Deleting the new organisation leaves the renamed one whole.
    expect((await api("DELETE", `/organizations/${first}`)).status).toBe(204);
    expect((await api("GET", `/workspaces/${kept.id}`)).status).toBe(200);
    expect((await api("GET", `/organizations/${renamed}/workspaces`)).body.meta.pagination["total-count"]).toBe(1);
  });

  it("refuses a taken name (any case) and an invalid one, as on create; the same name is no rename", async () => {
    const a = orgName();
    const b = orgName();
    await createOrg(ADMIN, a);
    await createOrg(ADMIN, b);
    for (const taken of [b, b.toUpperCase()]) {
      const res = await rename(a, taken);
      expect(res.status).toBe(422);
      expect(res.body.errors[0]).toMatchObject({ status: "422", detail: "Name has already been taken", source: { pointer: "/data/attributes/name" } });
    }
    const created = await api("POST", "/organizations", { body: { data: { type: "organizations", attributes: { name: "bad name", email: "a@b.c" } } } });
    const invalid = await rename(a, "bad name");
    expect(invalid.status).toBe(422);
    expect(invalid.body.errors[0].detail).toBe(created.body.errors[0].detail);
    expect(invalid.body.errors[0].source).toEqual({ pointer: "/data/attributes/name" });
    expect((await rename(a, "x".repeat(41))).status).toBe(422);
    expect((await api("GET", `/organizations/${a}`)).body.data.attributes.name).toBe(a);
    // Sending the current name changes nothing (and needs no more than any update).
    const same = await rename(a, a);
    expect(same.status).toBe(200);
    expect(same.body.data.id).toBe(a);
    // A change of case is a rename (the name is shown as stored); the name stays the organisation's.
    expect((await rename(a, a.toUpperCase())).body.data.id).toBe(a.toUpperCase());
    expect((await api("GET", `/organizations/${a}`)).body.data.id).toBe(a.toUpperCase());
  });

  it("is for owners: the organisation token may update, not rename (403); other members see 404", async () => {
    const name = orgName();
    await createOrg(ADMIN, name);
    const orgToken = await makeOrgToken(name);
    const manager = await makeTeam(name, { "manage-teams": true, "manage-workspaces": true });
    const member = await makeUser({ teams: [manager.id] });
    const owner = await makeUser({ ownerOf: name });
    const denied = await rename(name, orgName(), orgToken.token);
    expect(denied.status).toBe(403);
    expect(denied.body.errors[0].title).toBe("forbidden");
    const email = await api("PATCH", `/organizations/${name}`, {
      token: orgToken.token,
      body: { data: { type: "organizations", attributes: { email: "new@example.com" } } },
    });
    expect(email.status).toBe(200);
    expect((await rename(name, orgName(), manager.token)).status).toBe(404);
    expect((await rename(name, orgName(), member.token)).status).toBe(404);
    expect((await api("GET", `/organizations/${name}`)).body.data.attributes.email).toBe("new@example.com");
    const renamed = orgName();
    expect((await rename(name, renamed, owner.token)).status).toBe(200);
    // The organisation token, the team token and the owner keep their standing under the new name.
    expect((await api("GET", `/organizations/${renamed}`, { token: orgToken.token })).status).toBe(200);
    expect((await api("GET", `/organizations/${renamed}/workspaces`, { token: manager.token })).status).toBe(200);
    expect((await api("GET", "/organizations", { token: owner.token })).body.data.map((o: { id: string }) => o.id)).toContain(renamed);
  });
});

describe("renaming under concurrent writes", () => {
  /** An organisation with a workspace, and the name it is to take. */
  const orgToRename = async () => {
    const before = orgName();
    await createOrg(ADMIN, before);
    return { before, after: orgName(), ws: await createWorkspace(before) };
  };

  it("creates, updates and locks racing a rename end as some serial order would", async () => {
    for (let round = 0; round < 3; round++) {
      const { before, after, ws } = await orgToRename();
      const body = (name: string) => ({ data: { type: "workspaces", attributes: { name } } });
      const [renamed, viaOld, viaNew, sameNameOld, sameNameNew, patched, locked] = await Promise.all([
        rename(before, after),
        Promise.all(Array.from({ length: 4 }, (_, i) => api("POST", `/organizations/${before}/workspaces`, { body: body(`old-${i}`) }))),
        Promise.all(Array.from({ length: 4 }, (_, i) => api("POST", `/organizations/${after}/workspaces`, { body: body(`new-${i}`) }))),
        // One name through both organisation names: claims are by the organisation's id, so at most one wins.
        api("POST", `/organizations/${before}/workspaces`, { body: body("contested") }),
        api("POST", `/organizations/${after}/workspaces`, { body: body("contested") }),
        api("PATCH", `/organizations/${before}/workspaces/${ws.attributes.name}`, {
          body: { data: { type: "workspaces", attributes: { description: "patched" } } },
        }),
        api("POST", `/workspaces/${ws.id}/actions/lock`, { body: { reason: "race" } }),
      ]);
      expect(renamed.status).toBe(200);
      const all = [...viaOld, ...viaNew, sameNameOld, sameNameNew, patched, locked];
      expect(all.filter((r) => r.status >= 500)).toEqual([]);
      // Through the old name: done before the rename (201, showing the old name) or after it (404).
      for (const r of [...viaOld, sameNameOld]) {
        expect([201, 404, 422]).toContain(r.status);
        if (r.status === 201) expect(r.body.data.relationships.organization.data.id).toBe(before);
      }
      // Through the new name: only after the rename (201, showing it) or before it (404).
      for (const r of [...viaNew, sameNameNew]) {
        expect([201, 404, 422]).toContain(r.status);
        if (r.status === 201) expect(r.body.data.relationships.organization.data.id).toBe(after);
      }
      expect([sameNameOld, sameNameNew].filter((r) => r.status === 201).length).toBeLessThanOrEqual(1);
      expect([...viaOld, ...viaNew].filter((r) => r.status === 422)).toEqual([]);
      expect([200, 404]).toContain(patched.status);
      expect(locked.status).toBe(200);

      // Afterwards: every workspace whose create succeeded is in the renamed organisation, exactly once, and no other.
      const createdIds = [...viaOld, ...viaNew, sameNameOld, sameNameNew].filter((r) => r.status === 201).map((r) => r.body.data.id as string);
      const listed = await api("GET", `/organizations/${after}/workspaces?page%5Bsize%5D=100`);
      expect(listed.body.data.map((w: { id: string }) => w.id).sort()).toEqual([ws.id, ...createdIds].sort());
      expect(listed.body.meta.pagination["total-count"]).toBe(createdIds.length + 1);
      for (const w of listed.body.data) expect(w.relationships.organization.data.id).toBe(after);
      const final = await api("GET", `/workspaces/${ws.id}`);
      expect(final.body.data.attributes.locked).toBe(true);
      expect(final.body.data.attributes.description).toBe(patched.status === 200 ? "patched" : null);
      expect((await api("GET", `/organizations/${before}`)).status).toBe(404);
    }
    await expectConsistent();
  });

  it("concurrent renames to one name, and a create of that name: exactly one wins", async () => {
    const target = orgName();
    const sources = [orgName(), orgName(), orgName()];
    for (const s of sources) await createOrg(ADMIN, s);
    const results = await Promise.all([
      ...sources.map((s) => rename(s, target)),
      api("POST", "/organizations", { body: { data: { type: "organizations", attributes: { name: target, email: "a@b.c" } } } }),
    ]);
    const won = results.filter((r) => r.status === 200 || r.status === 201);
    expect(won).toHaveLength(1);
    for (const r of results.filter((x) => !won.includes(x))) {
      expect(r.status).toBe(422);
      expect(r.body.errors[0].detail).toBe("Name has already been taken");
    }
    expect((await api("GET", `/organizations/${target}`)).status).toBe(200);
  });

  it("a rename racing a delete of the organisation: one of them, never both", async () => {
    for (let round = 0; round < 4; round++) {
      const { before, after, ws } = await orgToRename();
      const [renamed, deleted] = await Promise.all([rename(before, after), api("DELETE", `/organizations/${before}`)]);
      const outcome = [renamed.status, deleted.status];
      expect([
        [200, 404],
        [404, 204],
      ]).toContainEqual(outcome);
      if (renamed.status === 200) {
        expect((await api("GET", `/organizations/${after}`)).status).toBe(200);
        expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(200);
      } else {
        expect((await api("GET", `/organizations/${after}`)).status).toBe(404);
        expect((await api("GET", `/workspaces/${ws.id}`)).status).toBe(404);
      }
    }
  });

  it("two renames of one organisation: each serial order is possible, never a mix", async () => {
    const before = orgName();
    await createOrg(ADMIN, before);
    const [x, y] = [orgName(), orgName()];
    const [rx, ry] = await Promise.all([rename(before, x), rename(before, y)]);
    const statuses = [rx.status, ry.status].sort();
    // Both were addressed by the old name: the second finds it gone (404).
    expect(statuses).toEqual([200, 404]);
    const winner = rx.status === 200 ? x : y;
    expect((await api("GET", `/organizations/${winner}`)).status).toBe(200);
    expect((await api("GET", `/organizations/${winner === x ? y : x}`)).status).toBe(404);
  });
});
