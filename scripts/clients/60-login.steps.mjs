// `terraform login` end to end (login.v1), for `npm run test:clients`: the real Terraform asks for a token, Chromium
// (playwright-core, Debian's chromium) signs in with the user's password and approves on the authorization page, Terraform's local listener
// receives the code and exchanges it; then the saved credential drives `terraform init` and `plan` with a `cloud`
// block, and a denial leaves no credential.
//
// The CLI configuration ($HOME/.terraformrc) maps the plain-http local host to the service (discovery is https-only) with login.v1's
// client definition inside the `host` block, as absolute URLs (relative ones would resolve against an https
// discovery URL); it has no `credentials` block, which `terraform login` refuses to override. HOME is a temporary
// directory, so the credentials file is `$HOME/.terraform.d/credentials.tfrc.json`.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromiumPath } from "../lib/chromium.mjs";
import { check, readJson, waitFor } from "../lib/harness.mjs";
import { killGroup } from "../lib/service.mjs";

const org = "clients-login"; // created here

/** @param {import("./context.mjs").ClientContext} h */
export default async function (h) {
  const { step, tf, tfOk, apiOk, work, HOST: host, apiURL } = h;
  const base = h.proxy.base; // the URL the clients use
  const adminToken = h.service.token; // the site admin's, to make the user's password reset link
  const config = `host ${JSON.stringify(host)} {
  services = {
    "tfe.v2"   = ${JSON.stringify(apiURL)}
    "tfe.v2.1" = ${JSON.stringify(apiURL)}
    "tfe.v2.2" = ${JSON.stringify(apiURL)}
    "login.v1" = {
      client      = "terraform-cli"
      grant_types = ["authz_code"]
      authz       = ${JSON.stringify(`${base}/app/oauth/authorize`)}
      token       = ${JSON.stringify(`${base}/oauth/token`)}
      ports       = [10000, 10010]
    }
  }
}
`;
  // The CLI configuration in its default place ($HOME/.terraformrc), not TF_CLI_CONFIG_FILE: with that variable set,
  // Terraform 1.11 reads nothing of the configuration directory, so not the credentials file `terraform login` writes.
  const envFor = (home) => {
    writeFileSync(join(home, ".terraformrc"), config);
    return { HOME: home, TF_CLI_CONFIG_FILE: "", BROWSER: "true", TF_IN_AUTOMATION: "" };
  };
  const credentialsFile = (home) => join(home, ".terraform.d", "credentials.tfrc.json");
  const user = { id: null, username: `login-${Date.now().toString(36)}`, password: `correct horse ${Date.now()}` };
  const workspace = "login-cloud";
  /** @type {import("playwright-core").Browser | null} */
  let browser = null;
  let home = null;

  // Starts `terraform login`, answers its prompt, and resolves the authorization URL it prints, with the process.
  async function startLogin(into) {
    // Terraform 1.11 writes the credentials file but does not create its directory (a fresh HOME has none).
    mkdirSync(join(into, ".terraform.d"), { recursive: true });
    const run = tf(work, ["login", host], { input: "yes\n", env: envFor(into), background: true });
    let ended = null;
    run.done.then((r) => (ended = r));
    const url = await waitFor("terraform login to print the authorization URL", async () => {
      const m = /(http\S+\/app\/oauth\/authorize\?\S+)/.exec(run.output());
      if (!m && ended) check(false, `terraform login exited (${ended.code ?? ended.signal}) before printing a URL`, ended);
      return m?.[1] ?? null;
    });
    return { run, url };
  }

  // Signs in with the user's password on the page Terraform sent the browser to, and comes back to authorise.
  async function signInThere(page, url) {
    await page.goto(url);
    check(new URL(page.url()).pathname === "/app/session/new", `not signed in, the authorization URL led to ${page.url()}`);
    await page.fill("#username", user.username);
    await page.fill("#password", user.password);
    await Promise.all([page.waitForURL((u) => u.pathname === "/app/oauth/authorize"), page.click("#password-sign-in")]);
    check(await page.isVisible("#approve"), "the authorization page shows no Approve button");
  }

  // The user's password, set as a person would: the site admin's reset link (/app/admin/users), opened and filled in.
  async function setPassword() {
    const admin = await (await browser.newContext()).newPage();
    await admin.goto(`${base}/app/session/new`);
    await admin.fill("#token", adminToken);
    await Promise.all([admin.waitForURL(`${base}/app`), admin.press("#token", "Enter")]);
    await admin.goto(`${base}/app/admin/users`);
    await Promise.all([
      admin.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname.endsWith("/reset-link")),
      admin.click(`tr[data-user="${user.username}"] button`),
    ]);
    const link = (await admin.textContent("#new-link")).trim();
    await admin.context().close();
    const page = await (await browser.newContext()).newPage();
    await page.goto(link);
    await page.fill("#new-password", user.password);
    await page.fill("#password-confirmation", user.password);
    await Promise.all([page.waitForURL(`${base}/app`), page.click("#set-password")]);
    await page.context().close();
  }

  await step("login: terraform login, signed in and approved in Chromium; the credentials file holds a token the API accepts", async () => {
    await apiOk("POST", "/organizations", { data: { type: "organizations", attributes: { name: org, email: "login@example.com" } } });
    const created = await apiOk("POST", "/admin/users", {
      data: { type: "users", attributes: { username: user.username, email: `${user.username}@example.com` } },
    });
    user.id = created.json.data.id;
    const owners = (await apiOk("GET", `/organizations/${org}/teams?filter[names]=owners`)).json.data[0];
    await apiOk("POST", `/teams/${owners.id}/relationships/users`, { data: [{ type: "users", id: user.id }] });
    await apiOk("POST", `/organizations/${org}/workspaces`, { data: { type: "workspaces", attributes: { name: workspace, "execution-mode": "local" } } });

    const { chromium } = await import("playwright-core");
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ["--no-sandbox"] });
    await setPassword();
    home = mkdtempSync(join(work, "login-home-"));
    const { run, url } = await startLogin(home);
    const page = await (await browser.newContext()).newPage();
    await signInThere(page, url);
    // The browser is sent to Terraform's listener with the code. Terraform closes that listener (server.Close in
    // internal/command/login.go) as soon as the code arrives, racing its own response, so the page may load empty:
    // what is observed is the request, then the command's outcome.
    await Promise.all([
      page.waitForRequest((r) => new URL(r.url()).hostname === "localhost" && new URL(r.url()).pathname === "/login"),
      page.click("#approve"),
    ]);
    const r = await run.done;
    check(r.code === 0, `terraform login exited with ${r.code ?? r.signal}`, r);
    check(r.out.includes("Success!"), "terraform login does not report success", r);
    check(existsSync(credentialsFile(home)), `no ${credentialsFile(home)}`, r);
    const saved = JSON.parse(readFileSync(credentialsFile(home), "utf8")).credentials?.[host]?.token;
    check(typeof saved === "string" && saved.length > 0, `the credentials file has no token for ${host}`);
    const me = await fetch(`${apiURL}account/details`, { headers: { Authorization: `Bearer ${saved}` } });
    const body = await readJson(me);
    check(me.status === 200 && body.data.id === user.id, `the saved token's /account/details answered ${me.status} for ${body?.data?.id}`);
    const listed = await fetch(`${apiURL}users/${user.id}/authentication-tokens`, { headers: { Authorization: `Bearer ${saved}` } }).then(readJson);
    check(
      listed.data.some((t) => /^terraform login on /.test(t.attributes.description ?? "")),
      "the user's tokens do not include one named after terraform login",
    );
  });

  await step("login: terraform init and plan with a cloud block use the saved credential (none in the CLI configuration)", async () => {
    check(home && existsSync(credentialsFile(home)), "no credentials from the previous step");
    const dir = join(work, "login-cloud");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "main.tf"),
      `terraform {
  cloud {
    hostname     = ${JSON.stringify(host)}
    organization = ${JSON.stringify(org)}
    workspaces { name = ${JSON.stringify(workspace)} }
  }
}

output "greeting" { value = "hello from terraform login" }
`,
    );
    const env = { ...envFor(home), TF_CLOUD_HOSTNAME: "", TF_CLOUD_ORGANIZATION: "" };
    await tfOk(dir, ["init", "-input=false", "-no-color"], { env });
    const p = await tfOk(dir, ["plan", "-input=false", "-no-color"], { env });
    check(/greeting\s+=\s+"hello from terraform login"/.test(p.out), "the plan does not show the output", p);
  });

  await step("login: a denial in the browser gives Terraform no code and writes no credential", async () => {
    check(browser, "no browser from the first step");
    const deniedHome = mkdtempSync(join(work, "login-denied-"));
    const { run, url } = await startLogin(deniedHome);
    const page = await (await browser.newContext()).newPage();
    await signInThere(page, url);
    const [callback] = await Promise.all([
      page.waitForResponse((res) => new URL(res.url()).hostname === "localhost" && new URL(res.url()).pathname === "/login"),
      page.click("#deny"),
    ]);
    const at = new URL(callback.url());
    check(at.searchParams.get("error") === "access_denied" && !at.searchParams.get("code"), `deny led to ${callback.url()}`);
    // Terraform's listener refuses a callback without a code (400) and keeps waiting: it never gets a token.
    check(callback.status() === 400, `Terraform's listener answered the denial with ${callback.status()}`);
    check(!existsSync(credentialsFile(deniedHome)), "a credentials file was written after a denial");
    killGroup(run.pgid, "SIGKILL");
    await run.done;
    check(!existsSync(credentialsFile(deniedHome)), "a credentials file was written after a denial");
    await browser.close();
    browser = null;
  });
  if (browser) await browser.close();
}
