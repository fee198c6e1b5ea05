// A real Gitea 1.26.0 (test/vcs/gitea.ts) delivers signed webhooks to a loopback receiver, shows commit statuses and
// serves archives. Slow the first time (the build), so it runs only with GITEA_TEST=1 (the client suite sets it);
// GITEA_RECORD=1 also rewrites test/vcs/fixtures/gitea/*.json from what arrived.
import { createHash, createHmac } from "node:crypto";
import { writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyGitHub } from "../vcs/deliveries";
import { type Gitea, startGitea } from "../vcs/gitea";
import { archiveFiles } from "../vcs/tar";

const HOOK_SECRET = "hook-secret-for-this-run";
// The fixtures are re-signed with this secret over their normalised body (see test/vcs/README.md).
const FIXTURE_SECRET = "gitea-fixture-secret";
const FIXTURES = join(import.meta.dirname, "..", "vcs", "fixtures", "gitea");

interface Delivery {
  headers: Record<string, string>;
  body: string;
}

/** Records every POST it receives and answers 200. */
async function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers[req.rawHeaders[i]] = req.rawHeaders[i + 1];
      deliveries.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}/webhooks/vcs/gitea-test`, deliveries, server };
}

function header(d: Delivery, name: string): string | undefined {
  return Object.entries(d.headers).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

async function waitFor(deliveries: Delivery[], match: (d: Delivery, body: any) => boolean, what: string): Promise<Delivery> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = deliveries.find((d) => match(d, JSON.parse(d.body)));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no ${what} delivery within 60 s; got ${deliveries.map((d) => header(d, "X-GitHub-Event")).join(", ")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(process.env.GITEA_TEST !== "1")("Gitea 1.26.0 on loopback", () => {
  let gitea: Gitea;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver();
    gitea = await startGitea({ log: (line) => console.log(line) });
  }, 1_200_000);

  afterAll(async () => {
    await gitea?.stop();
    receiver?.server.close();
  });

  it("delivers signed push and pull request events, shows statuses, serves archives", async () => {
    const repo = await gitea.createRepo("infra");
    const hook = await gitea.createHook(repo.fullName, { url: receiver.url, secret: HOOK_SECRET });
    expect((await gitea.listHooks(repo.fullName)).map((h) => h.id)).toEqual([hook.id]);
    expect(hook).toMatchObject({ type: "gitea", active: true });

    // A push through the contents API.
    const first = await gitea.commitFiles(repo.fullName, "main", { "main.tf": 'resource "null_resource" "a" {}\n' }, { message: "Add main.tf" });
    const push = await waitFor(receiver.deliveries, (d, b) => header(d, "X-GitHub-Event") === "push" && b.after === first.sha, "push");
    expect(header(push, "X-GitHub-Delivery")).toMatch(/^[0-9a-f-]{36}$/);
    expect(await verifyGitHub(HOOK_SECRET, push.body, header(push, "X-Hub-Signature-256") ?? null)).toBe(true);
    expect(await verifyGitHub("another secret", push.body, header(push, "X-Hub-Signature-256") ?? null)).toBe(false);
    const pushBody = JSON.parse(push.body);
    expect(pushBody).toMatchObject({ ref: "refs/heads/main", after: first.sha, repository: { full_name: repo.fullName, default_branch: "main" } });
    expect(pushBody.commits[0]).toMatchObject({ id: first.sha, added: ["main.tf"] });
    // Gitea's push lacks GitHub's created/deleted/forced and compare, and has compare_url (notes §3.6).
    expect(pushBody.created).toBeUndefined();
    expect(pushBody.compare_url).toBeDefined();

    // A push with the git client over HTTP opens a branch; a pull request from it; a second commit updates it.
    const branch = await gitea.gitPush(repo.fullName, "feature", { "network/vpc.tf": "# vpc\n" }, { message: "Add the VPC" });
    await waitFor(
      receiver.deliveries,
      (d, b) => header(d, "X-GitHub-Event") === "push" && b.ref === "refs/heads/feature" && b.after === branch.sha,
      "git push",
    );
    const pull = await gitea.openPullRequest(repo.fullName, { head: "feature", base: "main", title: "Network" });
    expect(pull).toMatchObject({ headSha: branch.sha, headRef: "feature", baseRef: "main", state: "open" });
    const opened = await waitFor(receiver.deliveries, (d, b) => header(d, "X-GitHub-Event") === "pull_request" && b.action === "opened", "pull_request opened");
    expect(await verifyGitHub(HOOK_SECRET, opened.body, header(opened, "X-Hub-Signature-256") ?? null)).toBe(true);
    expect(JSON.parse(opened.body).pull_request).toMatchObject({ number: pull.number, head: { sha: branch.sha, ref: "feature" }, base: { ref: "main" } });

    const update = await gitea.commitFiles(repo.fullName, "feature", { "network/vpc.tf": "# vpc v2\n" });
    // Gitea sends a new head as `pull_request` with action "synchronized" (GitHub: "synchronize").
    const synced = await waitFor(
      receiver.deliveries,
      (d, b) => header(d, "X-GitHub-Event") === "pull_request" && b.action === "synchronized" && b.pull_request.head.sha === update.sha,
      "pull_request synchronized",
    );
    expect(header(synced, "X-GitHub-Event-Type")).toBe("pull_request_sync");
    expect(await verifyGitHub(HOOK_SECRET, synced.body, header(synced, "X-Hub-Signature-256") ?? null)).toBe(true);
    const edited = await gitea.updatePullRequest(repo.fullName, pull.number, { title: "Network, v2" });
    expect(edited.headSha).toBe(update.sha);

    // Statuses as the service will post them, combined per context.
    await gitea.createStatus(repo.fullName, update.sha, {
      state: "pending",
      context: "Terraform Cloud/acme/net",
      targetUrl: "https://service.test/runs/run-1",
    });
    expect(await gitea.combinedStatus(repo.fullName, update.sha)).toMatchObject({ state: "pending", totalCount: 1 });
    await gitea.createStatus(repo.fullName, update.sha, { state: "success", context: "Terraform Cloud/acme/net", description: "Planned: 1 to add" });
    await gitea.createStatus(repo.fullName, update.sha, { state: "success", context: "Terraform Cloud/acme/app" });
    const combined = await gitea.combinedStatus(repo.fullName, update.sha);
    expect(combined.state).toBe("success");
    expect(combined.statuses.map((s) => `${s.context}=${s.state}`).sort()).toEqual(["Terraform Cloud/acme/app=success", "Terraform Cloud/acme/net=success"]);

    // The archive at a commit has one top-level directory named after the repository.
    const { root, files } = await archiveFiles(await gitea.archive(repo.fullName, update.sha));
    expect(root).toBe("infra");
    expect(files).toMatchObject({ "main.tf": 'resource "null_resource" "a" {}\n', "network/vpc.tf": "# vpc v2\n" });

    if (process.env.GITEA_RECORD === "1") {
      await record("push", push);
      await record("pull_request_opened", opened);
      await record("pull_request", synced);
    }

    await gitea.deleteHook(repo.fullName, hook.id);
    expect(await gitea.listHooks(repo.fullName)).toEqual([]);
  }, 300_000);

  /** Writes a delivery with loopback URLs normalised and its signatures recomputed with FIXTURE_SECRET. */
  async function record(name: string, delivery: Delivery): Promise<void> {
    const origin = gitea.url.replace(/\/$/, "");
    const receiverOrigin = new URL(receiver.url).origin;
    const text = delivery.body.replaceAll(origin, "http://gitea.test:3000").replaceAll(receiverOrigin, "http://service.test");
    for (const secret of [gitea.token, gitea.adminPassword, HOOK_SECRET]) expect(text).not.toContain(secret);
    const body = JSON.parse(text);
    const compact = JSON.stringify(body);
    const hmac = (alg: string) => createHmac(alg, FIXTURE_SECRET).update(compact).digest("hex");
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(delivery.headers)) {
      if (["host", "content-length", "accept-encoding", "connection"].includes(key.toLowerCase())) continue;
      headers[key] = value;
    }
    headers["X-Hub-Signature-256"] = `sha256=${hmac("sha256")}`;
    headers["X-Hub-Signature"] = `sha1=${hmac("sha1")}`;
    for (const key of ["X-Gitea-Signature", "X-Gogs-Signature"]) if (key in headers) headers[key] = hmac("sha256");
    // The fixture's body hash, so a reader can tell it was normalised and re-signed.
    const fixture = { recordedFrom: "Gitea 1.26.0", bodySha256: createHash("sha256").update(compact).digest("hex"), headers, body };
    await writeFile(join(FIXTURES, `${name}.json`), `${JSON.stringify(fixture, null, 2)}\n`);
  }
});
