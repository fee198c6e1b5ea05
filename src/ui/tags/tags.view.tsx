/** @jsxImportSource hono/jsx */
/** A workspace's tags and tag bindings: plain data in, HTML out (src/ui/tags/tags.routes.tsx calls the services). */
import type { Principal } from "../../auth/principal";
import { wsPath } from "../context";
import { type Refusal, Refused, sentOf } from "../forms";
import { Layout } from "../layout";
import { Crumbs, Table, type WorkspaceName } from "../parts";

export function TagsPage(props: {
  principal: Principal;
  ws: WorkspaceName;
  canManage: boolean;
  tags: string[];
  bindings: Array<{ key: string; value: string }>;
  inherited: Array<{ key: string; value: string; project: string }>;
  refusal?: Refusal;
}) {
  const { ws } = props;
  const base = `${wsPath(ws.organization, ws.name)}/tags`;
  const sentTag = sentOf(props.refusal, "flat-tags") ?? {};
  const sentBinding = sentOf(props.refusal, "tag-bindings") ?? {};
  return (
    <Layout title={`Tags · ${ws.name}`} principal={props.principal}>
      <Crumbs organization={ws.organization} workspace={ws.name} here="Tags" />
      <h1>Tags of {ws.name}</h1>
      <section aria-labelledby="flat-h">
        <h2 id="flat-h">Tags</h2>
        {props.tags.length ? (
          <ul id="flat-tags" class="consumers">
            {props.tags.map((t) => (
              <li data-tag={t}>
                <span class="tag">{t}</span>
                {props.canManage ? (
                  <form method="post" action={`${base}/delete`}>
                    <input type="hidden" name="name" value={t} />
                    <button type="submit" aria-label={`Remove tag ${t}`}>
                      Remove
                    </button>
                  </form>
                ) : null}
              </li>
            ))}
          </ul>
        ) : (
          <p class="muted">No tags.</p>
        )}
        {props.canManage ? (
          <>
            <Refused refusal={props.refusal} form="flat-tags" what="The tag was not added:" />
            <form class="actions" method="post" action={base}>
              <div>
                <label for="t-name">Tag</label>
                <input id="t-name" name="name" autocomplete="off" value={sentTag.name ?? ""} />
              </div>
              <button type="submit">Add tag</button>
            </form>
          </>
        ) : null}
      </section>
      <section aria-labelledby="bindings-h">
        <h2 id="bindings-h">Tag bindings</h2>
        <Refused refusal={props.refusal} form="tag-bindings" what="The tag bindings were not changed:" />
        {props.bindings.length || props.inherited.length ? (
          <Table id="tag-bindings" columns={props.canManage ? ["Key", "Value", "Source", "Change"] : ["Key", "Value", "Source"]}>
            {props.bindings.map((b) => (
              <tr data-binding={b.key}>
                <td>{b.key}</td>
                <td>{b.value || "—"}</td>
                <td>this workspace</td>
                {props.canManage ? (
                  <td>
                    <div class="actions">
                      <form method="post" action={`${base}/bindings`}>
                        <input type="hidden" name="key" value={b.key} />
                        <input name="value" value={b.value} aria-label={`New value of ${b.key}`} autocomplete="off" />
                        <button type="submit" aria-label={`Save the value of ${b.key}`}>
                          Save
                        </button>
                      </form>
                      <form method="post" action={`${base}/bindings/delete`}>
                        <input type="hidden" name="key" value={b.key} />
                        <button class="danger" type="submit" aria-label={`Remove binding ${b.key}`}>
                          Remove
                        </button>
                      </form>
                    </div>
                  </td>
                ) : null}
              </tr>
            ))}
            {props.inherited.map((b) => (
              <tr class="inherited" data-inherited={b.key}>
                <td>{b.key}</td>
                <td>{b.value || "—"}</td>
                <td>
                  inherited from project <strong>{b.project}</strong>
                </td>
                {props.canManage ? <td class="muted">set on the project</td> : null}
              </tr>
            ))}
          </Table>
        ) : (
          <p class="muted">No tag bindings.</p>
        )}
        {props.canManage ? (
          <form class="actions" method="post" action={`${base}/bindings`}>
            <div>
              <label for="b-key">Key</label>
              <input id="b-key" name="key" autocomplete="off" value={sentBinding.key ?? ""} />
            </div>
            <div>
              <label for="b-value">Value</label>
              <input id="b-value" name="value" autocomplete="off" value={sentBinding.value ?? ""} />
            </div>
            <button type="submit">Add binding</button>
          </form>
        ) : null}
      </section>
    </Layout>
  );
}
