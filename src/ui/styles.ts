/** The UI's one stylesheet (served from /app/ui.css; no external fonts or CDNs). */
export const UI_CSS = `
:root { color-scheme: light; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg: #fff; --soft: #f6f8fa; --accent: #0550ae; --warn: #9a6700; --bad: #a40e26; }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
a { color: var(--accent); }
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, textarea:focus-visible, pre:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
header.top { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; padding: .6rem 1rem; border-bottom: 1px solid var(--line); background: var(--soft); }
header.top .brand { font-weight: 600; color: var(--fg); text-decoration: none; }
header.top form { margin: 0; }
main { max-width: 72rem; margin: 0 auto; padding: 1rem; }
h1 { font-size: 1.4rem; margin: .2rem 0 1rem; word-break: break-word; }
h2 { font-size: 1.1rem; margin: 1.6rem 0 .6rem; }
nav.crumbs { font-size: .9rem; color: var(--muted); margin-bottom: .4rem; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: .45rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: .85rem; color: var(--muted); font-weight: 600; }
.scroll { overflow-x: auto; }
ol.audit-events { list-style: none; padding: 0; } ol.audit-events li { padding: .4rem 0; border-bottom: 1px solid var(--line); overflow-wrap: anywhere; } ol.audit-events .muted { color: var(--muted); font-size: .9rem; }
dl.attrs { display: grid; grid-template-columns: minmax(8rem, max-content) 1fr; gap: .3rem 1rem; margin: 0; }
dl.attrs dt { color: var(--muted); }
dl.attrs dd { margin: 0; word-break: break-word; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .8rem; border: 1px solid var(--line); background: var(--soft); white-space: nowrap; }
.badge.locked { border-color: var(--warn); color: #6b4700; background: #fff8c5; }
.tag { display: inline-block; margin: 0 .25rem .25rem 0; padding: 0 .4rem; border-radius: .3rem; font-size: .8rem; background: #ddf4ff; color: #0a3069; }
form.filters { display: grid; grid-template-columns: repeat(auto-fill, minmax(12rem, 1fr)); gap: .6rem 1rem; align-items: end; margin-bottom: 1rem; padding: .8rem; background: var(--soft); border: 1px solid var(--line); border-radius: .4rem; }
label { display: block; font-size: .85rem; color: var(--muted); }
input, select { display: block; width: 100%; font: inherit; padding: .35rem .45rem; border: 1px solid #8c959f; border-radius: .3rem; background: #fff; color: var(--fg); }
input[type=checkbox] { display: inline; width: auto; }
button { font: inherit; padding: .35rem .8rem; border: 1px solid #8c959f; border-radius: .3rem; background: #fff; color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
a.button { display: inline-block; padding: .35rem .8rem; border: 1px solid #8c959f; border-radius: .3rem; text-decoration: none; }
a.button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { border-color: var(--bad); color: var(--bad); }
.actions { display: flex; flex-wrap: wrap; gap: .5rem; align-items: end; margin: .6rem 0; }
.actions form { display: flex; gap: .5rem; align-items: end; margin: 0; }
.muted { color: var(--muted); }
.error { border: 1px solid var(--bad); color: var(--bad); background: #ffebe9; padding: .6rem .8rem; border-radius: .4rem; }
nav.orgnav { display: flex; gap: 1rem; margin: 0 0 .6rem; }
nav.orgnav a[aria-current=page] { font-weight: 600; color: var(--fg); text-decoration: none; }
tr.inherited td { color: var(--muted); }
form.settings { display: grid; grid-template-columns: repeat(auto-fill, minmax(14rem, 1fr)); gap: .6rem 1rem; align-items: end; padding: .8rem; border: 1px solid var(--line); border-radius: .4rem; }
form.settings .wide { grid-column: 1 / -1; }
form.settings .check { display: flex; gap: .4rem; align-items: center; }
form.settings .check label { display: inline; font-size: 1rem; color: var(--fg); }
.error ul { margin: .3rem 0 0; padding-left: 1.2rem; }
.error p { margin: 0; }
.pager { display: flex; gap: 1rem; align-items: center; margin: 1rem 0; flex-wrap: wrap; }
.signin { max-width: 28rem; margin: 3rem auto; }
.signin form > * { margin-bottom: .8rem; }
details.danger { margin-top: 1.6rem; border: 1px solid var(--bad); border-radius: .4rem; padding: .6rem .8rem; }
details.danger summary { cursor: pointer; color: var(--bad); }
ul.consumers li { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin-bottom: .3rem; }
ul.consumers form { margin: 0; }
td .actions { margin: 0; }
td .actions select { width: auto; }
code { font-size: .9em; word-break: break-all; }
/* Runs (src/ui/runs/runs.view.tsx): statuses, the logs with Terraform's colours, the action forms. */
.badge.good { border-color: #1a7f37; color: #116329; background: #dafbe1; }
.badge.bad { border-color: var(--bad); color: var(--bad); background: #ffebe9; }
.badge.busy { border-color: var(--accent); color: var(--accent); background: #ddf4ff; }
h1 .badge, h2 .badge { vertical-align: middle; font-weight: 400; }
.sr-only { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
.counts { white-space: nowrap; }
pre.log { margin: .6rem 0; padding: .6rem .8rem; max-height: 32rem; overflow: auto; background: var(--soft); border: 1px solid var(--line); border-radius: .4rem; font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; white-space: pre-wrap; word-break: break-word; }
.a-b { font-weight: 700; }
.a-f1 { color: #a40e26; } .a-f2 { color: #116329; } .a-f3 { color: #6b4700; } .a-f4 { color: #0550ae; } .a-f5 { color: #6639ba; } .a-f6 { color: #0e5f66; }
.run-actions { align-items: stretch; }
.run-actions form.run-action { flex-direction: column; align-items: flex-start; padding: .6rem; border: 1px solid var(--line); border-radius: .4rem; flex: 1 1 14rem; }
.run-actions form.run-action > div { width: 100%; }
textarea { display: block; width: 100%; font: inherit; padding: .35rem .45rem; border: 1px solid #8c959f; border-radius: .3rem; }
ol.timeline { margin: 0; padding-left: 1.2rem; }
td.message { word-break: break-word; }
.change.create { color: #116329; } .change.delete { color: #a40e26; } .change.update { color: #6b4700; } .change.replace { color: #6639ba; }
/* Password sign-in (src/ui/passwords/passwords.routes.tsx): its submit is an input; a link shown once. */
input[type=submit] { display: inline-block; width: auto; cursor: pointer; padding: .35rem .8rem; }
input[type=submit].primary { background: var(--accent); border-color: var(--accent); color: #fff; }
input[type=submit]:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
.signin h2 { margin-top: 2rem; }
.created { border: 1px solid #1a7f37; background: #dafbe1; padding: .6rem .8rem; border-radius: .4rem; margin: 1rem 0; }
.created p { margin: .3rem 0; }
/* The organisation's pages (src/ui/organizations/organizations.parts.tsx): six tabs wrap; one-button forms sit inline; edit forms fold. */
nav.orgnav { flex-wrap: wrap; gap: .3rem 1rem; }
form.inline { display: inline; margin: 0; }
details.edit { margin: .5rem 0; }
details.change-item { margin: .3rem 0; border-bottom: 1px solid var(--line, #ddd); padding: .2rem 0; }
details.change-item summary { cursor: pointer; overflow-wrap: anywhere; }
details.change-item td code { overflow-wrap: anywhere; white-space: pre-wrap; }
.badge.forces { margin-left: .3rem; white-space: normal; color: #6639ba; border-color: #6639ba; }
details.edit summary { cursor: pointer; color: var(--accent); }
h3 { font-size: 1rem; margin: 1.2rem 0 .4rem; }
fieldset.checks { border: 1px solid var(--line); border-radius: .4rem; display: grid; grid-template-columns: repeat(auto-fill, minmax(15rem, 1fr)); gap: .3rem 1rem; }
fieldset.checks .check { display: flex; gap: .4rem; align-items: center; }
fieldset.checks .check label { display: inline; font-size: 1rem; color: var(--fg); }
/* State (src/ui/states/states.view.tsx): the resource-count chart (inline SVG) and the rollback confirmation. */
figure.chart { margin: 0 0 .6rem; max-width: 48rem; }
figure.chart svg { display: block; width: 100%; height: auto; }
.chart .axis { stroke: #8c959f; stroke-width: 1; }
.chart .grid { stroke: var(--line); stroke-width: 1; stroke-dasharray: 4 4; }
.chart .line { fill: none; stroke: var(--accent); stroke-width: 2; }
.chart .point { fill: #fff; stroke: var(--accent); stroke-width: 2; }
.chart .label { fill: var(--muted); font-size: 14px; }
form.confirm .check { display: flex; gap: .4rem; align-items: center; margin: .6rem 0; }
form.confirm .check label { display: inline; font-size: 1rem; color: var(--fg); }
@media (max-width: 40rem) { main { padding: .6rem; } th.opt, td.opt { display: none; } }
`;
