// Browser steps for a workspace's daily work: creating a workspace, its variables and its tags. Each form's happy
// path is checked against what the API then shows, one refusal each carries the API's reason, a read-only team
// sees no form and its forged POSTs change nothing, and every new page passes the audit at 1280 and 360 px.
export default async function (h) {
  const { step, check, api, service, ORG } = h;
  const WS = "wsf-main";
  const base = `/app/${ORG}/workspaces/${WS}`;
  const secret = `wsf-secret-${Date.now()}`;
  let ws;
  let readerToken;
  let admin;

  const vars = async () => (await api("GET", `/workspaces/${ws.id}/vars`)).data;
  const flatTags = async () => (await api("GET", `/workspaces/${ws.id}/relationships/tags`)).data.map((t) => t.attributes.name);
  const bindings = async () => (await api("GET", `/workspaces/${ws.id}/tag-bindings`)).data.map((b) => `${b.attributes.key}=${b.attributes.value}`);

  await step("workspace forms: setup (a workspace and a read-only team, through the API)", async () => {
    ws = (await api("POST", `/organizations/${ORG}/workspaces`, { data: { type: "workspaces", attributes: { name: WS } } })).data;
    readerToken = await h.readerTokenFor(ws.id, "wsf-readers");
    admin = await h.signedIn(service.token);
  });

  await step("workspace forms: a new workspace (refused name, then created in the default project)", async () => {
    await admin.goto(`${service.base}/app/${ORG}/workspaces`);
    await Promise.all([admin.waitForURL(`**/app/${ORG}/workspaces/new`), admin.click("#new-workspace")]);
    await h.audit(admin, "ws-new");
    await admin.fill("#n-name", "bad name!");
    await h.submit(admin, "form.settings button[type=submit]", "/workspaces/new");
    await h.takeRefusalLog(admin);
    check((await admin.textContent("#new-workspace-errors")).includes("Name is invalid"), `refusal shown: ${await admin.textContent("#new-workspace-errors")}`);
    await admin.fill("#n-name", "wsf-created");
    await admin.fill("#n-description", "made in the browser");
    await admin.check("#n-auto");
    await h.submit(admin, "form.settings button[type=submit]", "/workspaces/new");
    check(admin.url().endsWith(`/app/${ORG}/workspaces/wsf-created`), `after create: ${admin.url()}`);
    const made = (await api("GET", `/organizations/${ORG}/workspaces/wsf-created`)).data;
    check(made.attributes.description === "made in the browser" && made.attributes["auto-apply"] === true, JSON.stringify(made.attributes).slice(0, 300));
    check(admin.errors.length === 0, `console errors: ${admin.errors.join("\n")}`);
  });

  await step("workspace forms: variables (add, sensitive write-only, duplicate refused, edit, delete)", async () => {
    await admin.goto(`${service.base}${base}`);
    await Promise.all([admin.waitForURL(`**${base}/variables`), admin.click("#variables-page")]);
    await admin.fill("#v-key", "region");
    await admin.fill("#v-value", "eu-west-1");
    await h.submit(admin, "form.settings button[type=submit]", "/variables");
    await admin.fill("#v-key", "TOKEN");
    await admin.fill("#v-value", secret);
    await admin.selectOption("#v-category", "env");
    await admin.check("#v-sensitive");
    await h.submit(admin, "form.settings button[type=submit]", "/variables");
    let listed = await vars();
    const region = listed.find((v) => v.attributes.key === "region");
    const token = listed.find((v) => v.attributes.key === "TOKEN");
    check(region?.attributes.value === "eu-west-1" && token?.attributes.sensitive === true && token.attributes.value === null, JSON.stringify(listed));
    check(!(await admin.content()).includes(secret), "the sensitive value is on the variables page");
    await h.audit(admin, "variables");

    await admin.fill("#v-key", "region");
    await admin.fill("#v-value", "again");
    await h.submit(admin, "form.settings button[type=submit]", "/variables");
    await h.takeRefusalLog(admin);
    check((await admin.textContent("#add-variable-errors")).includes("already been taken"), `refusal: ${await admin.textContent("#add-variable-errors")}`);

    await admin.goto(`${service.base}${base}/variables`);
    await Promise.all([admin.waitForURL(`**/variables/${token.id}/edit`), admin.click(`a[href$="/variables/${token.id}/edit"]`)]);
    check(!(await admin.content()).includes(secret), "the sensitive value is on its edit page");
    await h.audit(admin, "variable-edit");
    await admin.goto(`${service.base}${base}/variables/${region.id}/edit`);
    await admin.fill("#e-value", "us-east-1");
    await admin.fill("#e-description", "where it runs");
    await h.submit(admin, "form.settings button[type=submit]", `/variables/${region.id}`);
    listed = await vars();
    const edited = listed.find((v) => v.id === region.id);
    check(edited.attributes.value === "us-east-1" && edited.attributes.description === "where it runs", JSON.stringify(edited.attributes));

    await admin.goto(`${service.base}${base}/variables/${region.id}/edit`);
    await admin.click("details.danger summary");
    await admin.check("#d-confirm");
    await h.submit(admin, "button.danger", `/variables/${region.id}/delete`);
    check(JSON.stringify((await vars()).map((v) => v.id)) === JSON.stringify([token.id]), "the variable was not deleted");
    check(admin.errors.length === 0, `console errors: ${admin.errors.join("\n")}`);
  });

  await step("workspace forms: tags and tag bindings (add, reserved key refused, change, remove)", async () => {
    await admin.goto(`${service.base}${base}`);
    await Promise.all([admin.waitForURL(`**${base}/tags`), admin.click("#tags-page")]);
    await admin.fill("#t-name", "wsf-prod");
    await h.submit(admin, "button:text-is('Add tag')", "/tags");
    await admin.fill("#b-key", "owner");
    await admin.fill("#b-value", "platform");
    await h.submit(admin, "button:text-is('Add binding')", "/tags/bindings");
    check(JSON.stringify(await flatTags()) === '["wsf-prod"]', `tags: ${await flatTags()}`);
    check(JSON.stringify(await bindings()) === '["owner=platform"]', `bindings: ${await bindings()}`);
    await h.audit(admin, "tags");

    await admin.fill("#b-key", "hc:owner");
    await admin.fill("#b-value", "x");
    await h.submit(admin, "button:text-is('Add binding')", "/tags/bindings");
    await h.takeRefusalLog(admin);
    check((await admin.textContent("#tag-bindings-errors")).includes("reserved"), `refusal: ${await admin.textContent("#tag-bindings-errors")}`);

    await admin.goto(`${service.base}${base}/tags`);
    await admin.fill('tr[data-binding="owner"] input[name=value]', "infra");
    await h.submit(admin, 'tr[data-binding="owner"] button:text-is("Save")', "/tags/bindings");
    check(JSON.stringify(await bindings()) === '["owner=infra"]', `bindings: ${await bindings()}`);
    await h.submit(admin, "button[aria-label='Remove tag wsf-prod']", "/tags/delete");
    await h.submit(admin, "button[aria-label='Remove binding owner']", "/tags/bindings/delete");
    check((await flatTags()).length === 0 && (await bindings()).length === 0, "tag or binding not removed");
    check(admin.errors.length === 0, `console errors: ${admin.errors.join("\n")}`);
  });

  await step("workspace forms: a read-only team sees no forms, and its forged POSTs change nothing", async () => {
    await api("POST", `/workspaces/${ws.id}/relationships/tags`, { data: [{ type: "tags", attributes: { name: "wsf-kept" } }] });
    const before = JSON.stringify({ vars: await vars(), tags: await flatTags(), bindings: await bindings() });
    const reader = await h.signedIn(readerToken);
    await reader.goto(`${service.base}/app/${ORG}/workspaces`);
    check((await reader.$("#new-workspace")) === null, "the reader is offered the new-workspace link");
    await reader.goto(`${service.base}${base}/variables`);
    check((await reader.$(`form[action="${base}/variables"]`)) === null, "the reader sees the add-variable form");
    check((await reader.$("a[href$='/edit']")) === null, "the reader sees edit links");
    check(!(await reader.content()).includes(secret), "the sensitive value is on the reader's page");
    await reader.goto(`${service.base}${base}/tags`);
    check((await reader.$(`form[action^="${base}/tags"]`)) === null, "the reader sees tag forms");
    const token = (await vars())[0];
    for (const [path, form] of [
      [`/app/${ORG}/workspaces/new`, { name: "wsf-forged" }],
      [`${base}/variables`, { key: "forged", value: "x", category: "terraform" }],
      [`${base}/variables/${token.id}/delete`, { confirm: "on" }],
      [`${base}/tags`, { name: "wsf-forged" }],
      [`${base}/tags/delete`, { name: "wsf-kept" }],
      [`${base}/tags/bindings`, { key: "forged", value: "x" }],
    ]) {
      const status = await h.post(reader, path, form);
      check(status === 404, `forged POST ${path} answered ${status}`);
    }
    const after = JSON.stringify({ vars: await vars(), tags: await flatTags(), bindings: await bindings() });
    check(after === before, `state changed: ${before} → ${after}`);
    const none = await fetch(`${service.base}/api/v2/organizations/${ORG}/workspaces/wsf-forged`, { headers: { Authorization: `Bearer ${service.token}` } });
    check(none.status === 404, `the forged workspace exists (${none.status})`);
    check(reader.errors.length === 0, `console errors: ${reader.errors.join("\n")}`);
    await reader.context().close();
  });

  await step("workspace forms: the new pages fit a 360 px wide screen", async () => {
    const phone = await h.signedIn(service.token, { width: 360, height: 740 });
    const token = (await vars())[0];
    for (const [path, label] of [
      [`/app/${ORG}/workspaces/new`, "ws-new"],
      [`${base}/variables`, "variables"],
      [`${base}/variables/${token.id}/edit`, "variable-edit"],
      [`${base}/tags`, "tags"],
      [base, "workspace-forms-settings"],
    ]) {
      await phone.goto(`${service.base}${path}`);
      await h.audit(phone, label);
    }
    await phone.context().close();
    await admin.context().close();
  });
}
