// Every 2xx JSON:API response a test receives from a documented route is checked against the response schema that
// openapi.json gives for its method, path and status: a serialiser that emits an attribute its resource schema
// lacks, a value of another type, or a status the route does not document fails the test that made the request.
import { Validator } from "@cfworker/json-schema";
import committed from "../openapi.json";

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
}
const doc = committed as unknown as { paths: Record<string, Record<string, Operation>>; components: unknown };

const routes = Object.entries(doc.paths).map(([path, ops]) => ({
  path,
  ops,
  pattern: new RegExp(`^${path.replace(/[.\\^$|?*+()[\]]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`),
  // A literal segment wins over a parameter (e.g. `/organizations/{name}/tags` over `/organizations/{name}/{x}`).
  params: (path.match(/\{/g) ?? []).length,
}));

/** The documented route of a request path, the one with the fewest parameters when several match. */
export function documentedRoute(pathname: string): { path: string; ops: Record<string, Operation> } | undefined {
  return routes.filter((r) => r.pattern.test(pathname)).sort((a, b) => a.params - b.params)[0];
}

const validators = new Map<string, Validator>();

/** How `body` fails the documented schema of its response ([] when it matches); null for a path openapi.json does not document. */
export function responseErrors(method: string, pathname: string, status: number, body: unknown): string[] | null {
  const route = documentedRoute(pathname);
  if (!route) return null;
  const op = route.ops[method.toLowerCase()];
  const key = `${method.toUpperCase()} ${route.path} ${status}`;
  if (!op) return [`${key}: method not documented`];
  const response = op.responses[String(status)];
  if (!response) return [`${key}: status not documented`];
  const schema = response.content?.["application/vnd.api+json"]?.schema;
  if (!schema) return [`${key}: documented without a body`];
  let validator = validators.get(key);
  if (!validator) {
    validator = new Validator({ ...(schema as object), components: doc.components }, "2020-12", false);
    validators.set(key, validator);
  }
  const result = validator.validate(body);
  // The deepest errors name the member at fault; the outer ones only say that a subschema failed.
  return result.valid ? [] : result.errors.filter((e) => !e.error.startsWith("A subschema had errors")).map((e) => `${key}: ${e.instanceLocation} ${e.error}`);
}

/** Throws when a 2xx JSON:API response of a documented route does not match its documented schema. */
export function assertDocumented(method: string, url: string, res: { status: number; body: unknown; text: string }): void {
  if (res.status < 200 || res.status >= 300 || res.text.length === 0) return;
  const errors = responseErrors(method, new URL(url).pathname, res.status, res.body);
  if (errors?.length) throw new Error(`response does not match openapi.json:\n${errors.slice(-5).join("\n")}\n${res.text.slice(0, 500)}`);
}
