import { OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Hook } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { ZodError } from "zod";
import { ApiError, fail, ok as success, type ErrorObject, type Result } from "../errors";
import type { AppEnv } from "../env";

/** RFC 6901 escaping for JSON pointers. */
function pointerOf(path: ReadonlyArray<PropertyKey>): string {
  return `/${path.map((p) => String(p).replace(/~/g, "~0").replace(/\//g, "~1")).join("/")}`;
}

/**
 * The values of an `include` query parameter (comma-separated, blanks ignored), each once in the order given; a value
 * not in `allowed` is the 400 clients match (`Invalid include parameter: <value>`, go-tfe's ErrInvalidIncludeValue).
 */
export function includesOf(raw: string | undefined, allowed: Iterable<string>): string[] {
  const known = new Set(allowed);
  const values = [
    ...new Set(
      (raw ?? "")
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean),
    ),
  ];
  for (const v of values) if (!known.has(v)) throw ApiError.of("invalid_include", { detail: `Invalid include parameter: ${v}`, parameter: "include" });
  return values;
}

/** Turns a zod failure into a JSON:API error document: pointers for bodies, parameters for queries. */
export function validationError(error: ZodError, target: string): ApiError {
  if (target === "param") return ApiError.of("not_found");
  const issues = error.issues.slice(0, 20);
  const errors: ErrorObject[] = issues.map((issue) => {
    if (target === "query") {
      const parameter = String(issue.path[0] ?? "");
      return { status: "400", title: "invalid query parameter", detail: `${parameter}: ${issue.message}`, source: { parameter } };
    }
    const pointer = pointerOf(issue.path);
    return { status: "422", title: "invalid attribute", detail: describe(issue, pointer), source: { pointer } };
  });
  const status = target === "query" ? 400 : 422;
  return new ApiError(status, errors.length ? errors : [{ status: String(status), title: "invalid attribute" }]);
}

function describe(issue: ZodError["issues"][number], pointer: string): string {
  const member = pointer === "/" ? "document" : pointer.split("/").pop();
  return `${member}: ${issue.message}`;
}

export const defaultHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw validationError(result.error as ZodError, result.target);
};

/** A router whose validation failures become JSON:API errors. */
export function router(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook });
}

/** Request body content for JSON:API documents. */
export function jsonBody<T extends z.ZodType>(schema: T, required = true) {
  return { content: { "application/vnd.api+json": { schema } }, required };
}

/**
 * A body that may be absent, or empty even under a JSON Content-Type (the lock's reason, token create bodies),
 * which the route validator would refuse: the handler reads it here. An absent or empty body is parsed as
 * `undefined`, so the schema says whether that is valid and what it means. The outcome is a Result, so a service
 * may report a bad body only to a caller allowed to send it; a failure is the first error the validator would give.
 */
export async function optionalJsonBody<T extends z.ZodType>(c: Context, schema: T): Promise<Result<z.output<T>>> {
  const text = await c.req.text();
  let json: unknown;
  if (text.trim() !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      return fail("malformed_body");
    }
  }
  const parsed = await schema.safeParseAsync(json);
  if (parsed.success) return success(parsed.data);
  const [first] = validationError(parsed.error, "json").errors;
  return fail("invalid_attribute", first?.detail, first?.source && "pointer" in first.source ? first.source.pointer : undefined);
}

/** A response with a body: its document schema (`resourceDocument` / `listDocument` of src/jsonapi/schemas.ts). */
export function ok<S extends 200 | 201 = 200>(description: string, document: z.ZodType, status: S = 200 as S) {
  const response = { description, content: { "application/vnd.api+json": { schema: document } } } as const;
  return { [status]: response } as { readonly [K in S]: typeof response };
}
export const errorResponses = {
  400: { description: "Malformed request or bad include parameter" },
  401: { description: "Missing or invalid token" },
  404: { description: "Not found, or the caller may not access it" },
  415: { description: "Wrong Content-Type" },
  422: { description: "Validation error" },
} as const;
export const noContentResponse = { 204: { description: "Done; no body" } } as const;
