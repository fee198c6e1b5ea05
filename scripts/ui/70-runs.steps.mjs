// Browser steps for a run's plan and New run. A pool's agent played by the harness (scripts/lib/scripted-agent.mjs)
// plans runs with a JSON plan holding a created, an updated, a replaced and a destroyed resource, a sensitive
// attribute and output changes, redacted by the agent's own redactor, so no Terraform is needed. The run page shows
// each resource folded with its attribute diff, at desktop and 390 px, and never the sensitive value; a plan of more
// resources than a page holds is paged; New run on the runs page queues each kind of run (the API then shows it), a
// speculative plan gets the same view, a workspace without configuration is refused with the reason, and a read-only
// caller sees no form while its forged POSTs are refused and queue nothing.
import { gzipSync } from "node:zlib";
import { scriptedAgent } from "../lib/scripted-agent.mjs";

const WS = "plan-view";
const PAGED_WS = "plan-view-pages";
const EMPTY_WS = "plan-view-empty";
const SECRET = "s3cret-db-password-0042";
const OLD_SECRET = "old-password-1234";
/** A long value without spaces (a policy document): it must wrap at 390 px, not widen the page. */
const POLICY = JSON.stringify({
  Version: "2012-10-17",
  Statement: [{ Effect: "Allow", Action: ["s3:GetObject", "s3:PutObject"], Resource: "arn:aws:s3:::a-bucket-with-a-rather-long-name-for-the-test/*" }],
});

/** A plan as `terraform show -json` writes it (the fields the redactor copies). */
const FULL_PLAN = {
  format_version: "1.2",
  terraform_version: "1.11.4",
  resource_changes: [
    {
      address: "terraform_data.created",
      mode: "managed",
      type: "terraform_data",
      name: "created",
      change: {
        actions: ["create"],
        before: null,
        after: { input: { name: "web", ports: [80, 443], policy: POLICY }, triggers_replace: null },
        after_unknown: { id: true, output: true, input: { ports: [false, false] } },
        before_sensitive: false,
        after_sensitive: { input: { ports: [] } },
      },
    },
    {
      address: "aws_db_instance.main",
      mode: "managed",
      type: "aws_db_instance",
      name: "main",
      change: {
        actions: ["update"],
        before: { id: "db-1", instance_class: "db.t3.small", password: OLD_SECRET, tags: { env: "dev", team: "data" } },
        after: { id: "db-1", instance_class: "db.t3.large", password: SECRET, tags: { env: "prod", team: "data" } },
        after_unknown: { tags: {} },
        before_sensitive: { password: true, tags: {} },
        after_sensitive: { password: true, tags: {} },
      },
    },
    {
      address: "terraform_data.replaced",
      mode: "managed",
      type: "terraform_data",
      name: "replaced",
      action_reason: "replace_because_cannot_update",
      change: {
        actions: ["delete", "create"],
        before: { id: "r-1", triggers_replace: "v1" },
        after: { triggers_replace: "v2" },
        after_unknown: { id: true },
        before_sensitive: {},
        after_sensitive: {},
        replace_paths: [["triggers_replace"]],
      },
    },
    {
      address: "terraform_data.destroyed",
      mode: "managed",
      type: "terraform_data",
      name: "destroyed",
      action_reason: "delete_because_no_resource_config",
      change: { actions: ["delete"], before: { id: "d-1", input: "bye" }, after: null, after_unknown: false, before_sensitive: {}, after_sensitive: false },
    },
  ],
  output_changes: {
    endpoint: {
      actions: ["update"],
      before: "db-1.old.example",
      after: "db-1.new.example",
      before_sensitive: false,
      after_sensitive: false,
      after_unknown: false,
    },
    db_password: { actions: ["create"], before: null, after: SECRET, before_sensitive: false, after_sensitive: true, after_unknown: false },
    db_arn: { actions: ["create"], before: null, after: null, before_sensitive: false, after_sensitive: false, after_unknown: true },
  },
};
/** The folds the page shows, in the plan's order, with the action each names. */
const WANT = [
  ["terraform_data.created", "create"],
  ["aws_db_instance.main", "update"],
  ["terraform_data.replaced", "replace"],
  ["terraform_data.destroyed", "delete"],
];

/** `n` created resources: a plan longer than a page of the run page's changes. */
const manyCreated = (n) => ({
  format_version: "1.2",
  resource_changes: Array.from({ length: n }, (_, i) => ({
    address: `terraform_data.node[${i}]`,
    mode: "managed",
    type: "terraform_data",
    name: "node",
    index: i,
    change: { actions: ["create"], before: null, after: { input: `node-${i}` }, after_unknown: { id: true }, before_sensitive: false, after_sensitive: {} },
  })),
});

export default async function (h) {
  const { step, check, api, service, ORG, audit, gotoPage, submit, takeRefusalLog, signedIn, post, readerTokenFor } = h;
  const base = `/app/${ORG}/workspaces/${WS}`;
  let agent;
  let ws;
  let admin;
  let planRun;

  /** One attribute's row of a resource's fold: [before, after] as the page shows them (null: no such row). */
  const row = (page, address, path) =>
    page.$$eval(
      `details.change-item[data-change="${address}"] tbody tr`,
      (trs, p) => {
        const tr = trs.find((t) => t.cells[0]?.querySelector("code")?.textContent.trim() === p);
        return tr ? [tr.cells[1].textContent.trim(), tr.cells[2].textContent.trim()] : null;
      },
      path,
    );
  const rowIs = async (page, address, path, want) => {
    const got = await row(page, address, path);
    check(JSON.stringify(got) === JSON.stringify(want), `${address} ${path}: the page shows ${JSON.stringify(got)}, not ${JSON.stringify(want)}`);
  };

  /** The run page's folds, closed until each is opened as a person would (a click on its summary), then what they show. */
  const planShown = async (page) => {
    const folds = await page.$$eval("details.change-item", (ds) =>
      ds.map((d) => [d.getAttribute("data-change"), d.querySelector("summary .change")?.textContent]),
    );
    check(JSON.stringify(folds) === JSON.stringify(WANT), `folds: ${JSON.stringify(folds)}`);
    check((await page.$("details.change-item[open]")) === null, "a resource's fold is open before it is asked for");
    check(!(await page.isVisible('details.change-item[data-change="aws_db_instance.main"] table')), "a closed fold shows its diff");
    for (const summary of await page.$$("details.change-item > summary")) await summary.click();
    check((await page.$$("details.change-item[open]")).length === WANT.length, "a click did not open a fold");
    check(await page.isVisible('details.change-item[data-change="aws_db_instance.main"] table'), "an open fold hides its diff");
    const html = await page.content();
    check(!html.includes(SECRET) && !html.includes(OLD_SECRET), "a sensitive value is in the page's HTML");
    // The create: its values, nested ones by path, and what Terraform learns at apply.
    await rowIs(page, "terraform_data.created", "input.name", ["—", '"web"']);
    await rowIs(page, "terraform_data.created", "input.ports[1]", ["—", "443"]);
    await rowIs(page, "terraform_data.created", "id", ["—", "(known after apply)"]);
    await rowIs(page, "terraform_data.created", "input.policy", ["—", JSON.stringify(POLICY)]);
    await rowIs(page, "terraform_data.created", "triggers_replace", null);
    // The update: what changes, the sensitive password in words, the unchanged left out.
    await rowIs(page, "aws_db_instance.main", "instance_class", ['"db.t3.small"', '"db.t3.large"']);
    await rowIs(page, "aws_db_instance.main", "password", ["(sensitive value)", "(sensitive value)"]);
    await rowIs(page, "aws_db_instance.main", "tags.env", ['"dev"', '"prod"']);
    await rowIs(page, "aws_db_instance.main", "tags.team", null);
    await rowIs(page, "aws_db_instance.main", "id", null);
    // The replace and the destroy.
    await rowIs(page, "terraform_data.replaced", "triggers_replace", ['"v1"', '"v2"']);
    const forcing = await page.$$eval('details.change-item[data-change="terraform_data.replaced"] tbody tr', (trs) =>
      trs.filter((t) => t.cells[0].textContent.includes("forces replacement")).map((t) => t.cells[0].querySelector("code").textContent),
    );
    check(JSON.stringify(forcing) === '["triggers_replace"]', `attributes forcing the replacement: ${JSON.stringify(forcing)}`);
    await rowIs(page, "terraform_data.replaced", "id", ['"r-1"', "(known after apply)"]);
    await rowIs(page, "terraform_data.destroyed", "input", ['"bye"', "—"]);
    const outputs = await page.$$eval("#output-changes tbody tr", (trs) => trs.map((t) => [...t.cells].map((c) => c.textContent.trim())));
    check(
      JSON.stringify(outputs) ===
        JSON.stringify([
          ["create", "db_arn", "—", "(known after apply)"],
          ["create", "db_password", "—", "(sensitive value)"],
          ["update", "endpoint", '"db-1.old.example"', '"db-1.new.example"'],
        ]),
      `output changes: ${JSON.stringify(outputs)}`,
    );
    // Readable where it stands: no diff table needs sideways scrolling (the audit checks the page itself).
    const wide = await page.$$eval("details.change-item .scroll, #output-changes", (els) =>
      els
        .filter((e) => (e.closest(".scroll") ?? e).scrollWidth > (e.closest(".scroll") ?? e).clientWidth + 1)
        .map((e) => e.closest("details")?.dataset.change ?? e.id),
    );
    check(wide.length === 0, `these diffs scroll sideways at ${page.viewportSize().width} px: ${wide.join(", ")}`);
  };

  /** Uploads a configuration version to the workspace (an empty tar: the harness's agent never reads it). */
  const configure = async (id) => {
    const cv = (
      await api("POST", `/workspaces/${id}/configuration-versions`, { data: { type: "configuration-versions", attributes: { "auto-queue-runs": false } } })
    ).data;
    const put = await fetch(cv.attributes["upload-url"], {
      method: "PUT",
      body: gzipSync(Buffer.alloc(1024)),
      headers: { "Content-Type": "application/octet-stream" },
    });
    check(put.status === 200, `the upload answered ${put.status}`);
  };
  const queue = async (id, message) =>
    (await api("POST", "/runs", { data: { type: "runs", attributes: { message }, relationships: { workspace: { data: { type: "workspaces", id } } } } })).data;

  /** New run through the runs page's form; answers the run's id (the page it led to). */
  const newRun = async (page, kind, fields = {}) => {
    await gotoPage(page, `${service.base}${base}/runs`);
    await page.click("#new-run > summary");
    await page.selectOption("#nr-kind", kind);
    if (fields.message) await page.fill("#nr-message", fields.message);
    if (fields.targets) await page.fill("#nr-targets", fields.targets);
    if (fields.replace) await page.fill("#nr-replace", fields.replace);
    if (fields.variables) await page.fill("#nr-vars", fields.variables);
    await submit(page, "#new-run button[type=submit]", "/runs/new");
    const m = /\/runs\/(run-[A-Za-z0-9]+)$/.exec(new URL(page.url()).pathname);
    check(m, `New run (${kind}) led to ${page.url()}`);
    return m[1];
  };

  await step("plan view: created, updated, replaced and destroyed resources folded with their diffs; sensitive values never in the page", async () => {
    agent = await scriptedAgent({ base: service.base, api, organization: ORG, name: "ui-plan-pool" });
    ws = await agent.workspace(WS);
    await configure(ws.id);
    planRun = await queue(ws.id, "plan view");
    await agent.plan(planRun.id, FULL_PLAN);
    const status = (await api("GET", `/runs/${planRun.id}`)).data.attributes.status;
    check(status === "planned", `the run is ${status}, not planned`);
    admin = await signedIn(service.token);
    await gotoPage(admin, `${service.base}${base}/runs/${planRun.id}`);
    check((await admin.textContent("#plan-counts")).includes("+2 ~1 −2"), `counts: ${await admin.textContent("#plan-counts")}`);
    check((await admin.$("#changes-range")) === null, "a plan of 4 resources is paged");
    await planShown(admin);
    await audit(admin, "run-plan");
  });

  await step("plan view: the same plan at 390 px, every fold open, nothing wider than the screen", async () => {
    const phone = await signedIn(service.token, { width: 390, height: 844 });
    await gotoPage(phone, `${service.base}${base}/runs/${planRun.id}`);
    await planShown(phone);
    await audit(phone, "run-plan");
    await phone.context().close();
    // Out of the way of the runs New run queues next.
    await api("POST", `/runs/${planRun.id}/actions/discard`, { comment: "plan view seen" });
  });

  await step("plan view: a plan longer than a page is paged (Next, Previous, every resource once), never cut short", async () => {
    const paged = await agent.workspace(PAGED_WS);
    await configure(paged.id);
    const run = await queue(paged.id, "many resources");
    const n = 120;
    await agent.plan(run.id, manyCreated(n));
    const page = `${service.base}/app/${ORG}/workspaces/${PAGED_WS}/runs/${run.id}`;
    await gotoPage(admin, page);
    const seen = [];
    const ranges = [];
    for (;;) {
      ranges.push((await admin.textContent("#changes-range")).trim().replace(/\s+/g, " "));
      seen.push(...(await admin.$$eval("details.change-item", (ds) => ds.map((d) => d.getAttribute("data-change")))));
      const next = await admin.$("#changes-range a:text-is('Next')");
      if (!next) break;
      await Promise.all([admin.waitForURL(/changes-page=/), next.click()]);
    }
    check(
      JSON.stringify(ranges.map((r) => /Showing (\d+)–(\d+) of (\d+)/.exec(r)?.slice(1).join("-"))) ===
        JSON.stringify(["1-50-120", "51-100-120", "101-120-120"]),
      `ranges shown: ${JSON.stringify(ranges)}`,
    );
    check(JSON.stringify(seen) === JSON.stringify(Array.from({ length: n }, (_, i) => `terraform_data.node[${i}]`)), `resources shown: ${seen.length}`);
    await audit(admin, "run-plan-last-page");
    await Promise.all([admin.waitForURL(/changes-page=2/), admin.click("#changes-range a:text-is('Previous')")]);
    check((await admin.textContent("#changes-range")).includes("51–100"), `after Previous: ${await admin.textContent("#changes-range")}`);
    // A page past the end (an old link, a plan that shrank) shows the last page, not an empty list.
    await gotoPage(admin, `${page}?changes-page=9`);
    const past = (await admin.textContent("#changes-range")).replace(/\s+/g, " ");
    check(past.includes("101–120 of 120"), `page 9 of 3 shows: ${past}`);
    await api("POST", `/runs/${run.id}/actions/discard`, { comment: "pages seen" });
  });

  await step("New run: each kind from the runs page queues what the API then shows; a speculative plan gets the same view", async () => {
    const cases = [
      ["plan-only", { "plan-only": true, "refresh-only": false, "is-destroy": false }],
      ["apply", { "plan-only": false, "refresh-only": false, "is-destroy": false }],
      ["refresh-only", { "plan-only": false, "refresh-only": true, "is-destroy": false }],
      ["destroy", { "plan-only": false, "refresh-only": false, "is-destroy": true }],
    ];
    const queued = [];
    for (const [kind, want] of cases) {
      const runId = await newRun(admin, kind, {
        message: `${kind} from the browser`,
        targets: "terraform_data.created\nterraform_data.replaced",
        replace: kind === "refresh-only" ? "" : "terraform_data.replaced",
        variables: 'region = "eu-west-1"',
      });
      const a = (await api("GET", `/runs/${runId}`)).data.attributes;
      const got = { "plan-only": a["plan-only"], "refresh-only": a["refresh-only"], "is-destroy": a["is-destroy"] };
      check(JSON.stringify(got) === JSON.stringify(want), `${kind}: the API shows ${JSON.stringify(got)}`);
      check(a.message === `${kind} from the browser` && a.source === "tfe-ui", `${kind}: message ${a.message}, source ${a.source}`);
      check(
        JSON.stringify(a["target-addrs"]) === JSON.stringify(["terraform_data.created", "terraform_data.replaced"]),
        `${kind}: targets ${a["target-addrs"]}`,
      );
      const replace = kind === "refresh-only" ? null : ["terraform_data.replaced"];
      check(JSON.stringify(a["replace-addrs"] ?? null) === JSON.stringify(replace), `${kind}: replace ${JSON.stringify(a["replace-addrs"])}`);
      check(JSON.stringify(a.variables) === JSON.stringify([{ key: "region", value: '"eu-west-1"' }]), `${kind}: variables ${JSON.stringify(a.variables)}`);
      check((await admin.textContent("#run-message")) === `${kind} from the browser`, `${kind}: the run page shows ${await admin.textContent("#run-message")}`);
      if (kind === "plan-only") {
        await agent.plan(runId, FULL_PLAN);
        await gotoPage(admin, `${service.base}${base}/runs/${runId}`);
        check((await admin.textContent("#run-status")).trim() === "planned and finished", `speculative run: ${await admin.textContent("#run-status")}`);
        await planShown(admin);
        await audit(admin, "run-speculative-plan");
      } else queued.push(runId);
    }
    await gotoPage(admin, `${service.base}${base}/runs`);
    await admin.click("#new-run > summary");
    await audit(admin, "runs-new-run");
    // The runs list names what New run queued, newest first.
    const listed = await admin.$$eval("tr[data-run]", (rows) => rows.map((r) => r.getAttribute("data-run")));
    check(JSON.stringify(listed.slice(0, 3)) === JSON.stringify([...queued].reverse()), `runs listed: ${listed}`);
  });

  await step("New run: refused with the reason in a workspace without a configuration version; nothing queued", async () => {
    const empty = await agent.workspace(EMPTY_WS);
    await gotoPage(admin, `${service.base}/app/${ORG}/workspaces/${EMPTY_WS}/runs`);
    await admin.click("#new-run > summary");
    await admin.selectOption("#nr-kind", "plan-only");
    await admin.fill("#nr-message", "nothing to run");
    await submit(admin, "#new-run button[type=submit]", "/runs/new");
    await takeRefusalLog(admin);
    const reasons = await admin.textContent("#new-run-errors");
    check(reasons.includes("The workspace has no configuration version"), `reasons shown: ${reasons}`);
    check((await admin.inputValue("#nr-message")) === "nothing to run", "the refused form lost its message");
    check((await admin.inputValue("#nr-kind")) === "plan-only", "the refused form lost its kind");
    const runs = (await api("GET", `/workspaces/${empty.id}/runs?filter[operation]=plan_only,plan_and_apply,refresh_only,destroy`)).data;
    check(runs.length === 0, `the refused form queued ${runs.length} runs`);
    await audit(admin, "new-run-refused");
  });

  await step("New run: a read-only caller sees no form; its forged POSTs are refused and queue nothing", async () => {
    const token = await readerTokenFor(ws.id, "plan-view-readers");
    const reader = await signedIn(token);
    await gotoPage(reader, `${service.base}${base}/runs`);
    check((await reader.$$("tr[data-run]")).length > 0, "the reader does not see the runs");
    check((await reader.$("#new-run")) === null && (await reader.$(`form[action$="/runs/new"]`)) === null, "the reader sees the New run form");
    // The reader sees the plan too, with the same masking.
    await gotoPage(reader, `${service.base}${base}/runs/${planRun.id}`);
    check((await reader.$$("details.change-item")).length === WANT.length, "the reader does not see the plan's changes");
    check(!(await reader.content()).includes(SECRET), "a sensitive value is in the reader's page");
    await audit(reader, "run-plan-read-only");
    const count = async () =>
      (await api("GET", `/workspaces/${ws.id}/runs?filter[operation]=plan_only,plan_and_apply,refresh_only,destroy`)).meta.pagination["total-count"];
    const before = await count();
    for (const kind of ["apply", "destroy", "plan-only"]) {
      const status = await post(reader, `${base}/runs/new`, { kind, message: "forged", "target-addrs": "", "replace-addrs": "", variables: "" });
      check(status === 403 || status === 404, `the reader's forged ${kind} answered ${status}`);
    }
    const crossOrigin = await post(admin, `${base}/runs/new`, { kind: "destroy", message: "forged" }, "https://evil.example");
    check(crossOrigin === 403, `a cross-origin POST answered ${crossOrigin}`);
    check((await count()) === before, "a forged POST queued a run");
    check(reader.errors.length === 0, `console errors: ${reader.errors.join("\n")}`);
    await reader.context().close();
    await admin.context().close();
  });
}
