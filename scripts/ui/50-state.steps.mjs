// Browser steps for the state pages: a workspace with three state versions (seeded as Terraform does it: lock,
// create the version, upload its state to the signed URL), the states list with its resource chart, a version's page,
// rollback through its confirmation (then checked through the API), a refused rollback, and a reader's view.
import { createHash } from "node:crypto";

const WS = "state-ui";
const md5 = (s) => createHash("md5").update(s).digest("hex");
const stateOf = (serial, count) =>
  JSON.stringify({
    version: 4,
    terraform_version: "1.9.2",
    serial,
    lineage: "state-ui",
    outputs: { endpoint: { value: `https://v${serial}.example`, type: "string" }, password: { value: `hunter2-v${serial}`, type: "string", sensitive: true } },
    resources: [
      {
        mode: "managed",
        type: "null_resource",
        name: "node",
        provider: 'provider["registry.terraform.io/hashicorp/null"]',
        instances: Array.from({ length: count }, (_, i) => ({ index_key: i })),
      },
    ],
  });
const COUNTS = [2, 5, 3];

export default async function (h) {
  const { step, check, api, service, ORG } = h;
  const base = `/app/${ORG}/workspaces/${WS}`;
  let ws;
  const versions = [];
  let admin;
  let readerToken;

  const download = async (url) => {
    const res = await fetch(url);
    check(res.status === 200, `download ${url} answered ${res.status}`);
    return res.text();
  };
  const current = async () => (await api("GET", `/workspaces/${ws.id}/current-state-version`)).data;
  const total = async () =>
    (await api("GET", `/state-versions?filter[workspace][name]=${WS}&filter[organization][name]=${ORG}`)).meta.pagination["total-count"];
  /** A 409 answer is logged by the browser as one console error: expected after a refused rollback. */
  const takeConflictLog = async (page) => {
    for (let i = 0; i < 50 && !page.errors.some((e) => e.includes("status of 409")); i++) await page.waitForTimeout(100);
    const expected = page.errors.filter((e) => e.includes("status of 409"));
    check(expected.length === 1, `console after the refused rollback: ${page.errors.join("\n")}`);
    page.errors = page.errors.filter((e) => !expected.includes(e));
  };

  await step("state: seed a workspace with three state versions (lock, create, upload) and a reader team", async () => {
    ws = (await api("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: WS } } })).data;
    await api("POST", `/workspaces/${ws.id}/actions/lock`, { reason: "state steps" });
    for (const [i, count] of COUNTS.entries()) {
      const state = stateOf(i + 1, count);
      const sv = (
        await api("POST", `/workspaces/${ws.id}/state-versions`, {
          data: { type: "state-versions", attributes: { serial: i + 1, lineage: "state-ui", md5: md5(state) } },
        })
      ).data;
      const put = await fetch(sv.attributes["hosted-state-upload-url"], { method: "PUT", body: state });
      check(put.status < 300, `upload of serial ${i + 1} answered ${put.status}`);
      versions.push(sv.id);
    }
    check((await current()).id === versions[2], "the third version is not current");
    readerToken = await h.readerTokenFor(ws.id, "state-readers");
  });

  await step("state: the states list draws one chart point per version with its resource count", async () => {
    admin = await h.signedIn(service.token);
    await h.gotoPage(admin, `${service.base}${base}`);
    await Promise.all([admin.waitForURL(`**${base}/states`), admin.click("#all-states")]);
    const points = await admin.$$eval("svg#resource-chart circle.point", (cs) =>
      cs.map((c) => [Number(c.getAttribute("data-serial")), Number(c.getAttribute("data-count"))]),
    );
    check(JSON.stringify(points) === JSON.stringify(COUNTS.map((n, i) => [i + 1, n])), `chart points ${JSON.stringify(points)}`);
    const label = await admin.textContent("svg#resource-chart desc");
    check(label.includes("3 state versions"), `chart description: ${label}`);
    const rows = await admin.$$eval("tr[data-state-version]", (rs) => rs.map((r) => r.getAttribute("data-state-version")));
    check(JSON.stringify(rows) === JSON.stringify([...versions].reverse()), `list rows ${rows}`);
    await h.audit(admin, "state-list");
  });

  await step("state: a version's page shows its outputs (sensitive masked), resources and download", async () => {
    await Promise.all([admin.waitForURL(`**${base}/states/${versions[0]}`), admin.click(`a[href="${base}/states/${versions[0]}"]`)]);
    const text = await admin.textContent("main");
    check(text.includes("https://v1.example"), "the plain output is not shown");
    check(!(await admin.content()).includes("hunter2"), "the sensitive output's value is in the page");
    check((await admin.textContent("#state-resource-count")).trim() === "2", "resource count");
    check((await admin.textContent("#resources")).includes("null_resource.node"), "resources table");
    const href = await admin.getAttribute("#state-download", "href");
    check(JSON.parse(await download(href)).serial === 1, "the download link does not serve serial 1");
    await h.audit(admin, "state-version");
  });

  await step("state: roll back through the confirmation; the API shows a new current version with the old state", async () => {
    const before = await total();
    await Promise.all([admin.waitForURL(`**${base}/states/${versions[0]}/rollback`), admin.click("#rollback-link")]);
    await h.audit(admin, "state-rollback");
    await admin.check("#rb-confirm");
    await h.submit(admin, "form.confirm button[type=submit]", `/states/${versions[0]}/rollback`);
    const now = await current();
    check(!versions.includes(now.id), "no new version is current");
    check(admin.url().endsWith(`${base}/states/${now.id}`), `after the rollback the page is ${admin.url()}`);
    check(now.attributes.serial === 1, `the new current version has serial ${now.attributes.serial}`);
    check(now.relationships["rollback-state-version"].data?.id === versions[0], "the new version does not name the version it copies");
    const old = (await api("GET", `/state-versions/${versions[0]}`)).data;
    check((await download(now.attributes["hosted-state-download-url"])) === (await download(old.attributes["hosted-state-download-url"])), "contents differ");
    check((await total()) === before + 1, "history rewritten: the version count did not grow by one");
    check((await admin.textContent("h1")).includes("current"), "the new version's page does not say it is current");
    versions.push(now.id);
  });

  await step("state: a rollback without the lock is refused with the API's reason; nothing created", async () => {
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
    const before = await total();
    await h.gotoPage(admin, `${service.base}${base}/states/${versions[1]}/rollback`);
    check(await admin.isVisible("#lock-needed"), "the page does not say the workspace must be locked");
    await admin.check("#rb-confirm");
    await h.submit(admin, "form.confirm button[type=submit]", `/states/${versions[1]}/rollback`);
    await takeConflictLog(admin);
    const reasons = await admin.textContent("#rollback-errors");
    check(reasons.includes("must be locked by the caller"), `reasons shown: ${reasons}`);
    check((await total()) === before, "a version was created");
    check((await current()).id === versions[3], "the current version changed");
    await h.audit(admin, "state-rollback-refused");
  });

  await step("state: a reader sees no rollback, and a forged rollback POST is refused", async () => {
    await api("POST", `/workspaces/${ws.id}/actions/lock`, { reason: "state steps" });
    const reader = await h.signedIn(readerToken);
    await h.gotoPage(reader, `${service.base}${base}/states/${versions[1]}`);
    check((await reader.$("#rollback-link")) === null, "a reader is offered the rollback");
    const before = await total();
    const status = await h.post(reader, `${base}/states/${versions[1]}/rollback`, { confirm: "on" });
    check(status === 403 || status === 404, `the forged rollback answered ${status}`);
    const cross = await h.post(admin, `${base}/states/${versions[1]}/rollback`, { confirm: "on" }, "https://evil.example");
    check(cross === 403, `the cross-site rollback answered ${cross}`);
    check((await total()) === before, "a version was created");
    await reader.context().close();
    await api("POST", `/workspaces/${ws.id}/actions/unlock`);
  });

  await step("state: the list, a version and the rollback confirmation at 360 px", async () => {
    const phone = await h.signedIn(service.token, { width: 360, height: 780 });
    await h.gotoPage(phone, `${service.base}${base}/states`);
    await h.audit(phone, "state-list");
    await h.gotoPage(phone, `${service.base}${base}/states/${versions[0]}`);
    await h.audit(phone, "state-version");
    await h.gotoPage(phone, `${service.base}${base}/states/${versions[1]}/rollback`);
    await h.audit(phone, "state-rollback");
    await phone.context().close();
    await admin.context().close();
  });
}
