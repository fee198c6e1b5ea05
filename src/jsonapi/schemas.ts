/**
 * Schemas every route shares: the organisation path parameter, the page and include query parameters, and
 * the builders of response documents (a resource's type, id and attribute keys), so openapi.json describes
 * each response as precisely as each request.
 */
import { z } from "@hono/zod-openapi";
import { LIMITS } from "../limits";
import type { Page } from "./document";

// ---- parameters ----

/** `{organization_name}`: the organisation's name. */
export const orgParam = z.object({ organization_name: z.string().min(1).max(255) });

const pageValue = z.string().max(20).optional();
/** `page[number]` and `page[size]` of every paginated list; read with `pageOf`. */
export const pageQuery = z.object({ "page[number]": pageValue, "page[size]": pageValue });

/** `include`: a comma-separated list, checked against the endpoint's own values by its handler. */
export const includeQuery = z.object({ include: z.string().max(2000).optional() });

/** The page a list query asks for: below 1 → 1; unreadable → the default; sizes above the maximum clamp to it. */
export function pageOf(query: { "page[number]"?: string; "page[size]"?: string }): Page {
  const num = positiveInt(query["page[number]"]) ?? 1;
  const size = positiveInt(query["page[size]"]) ?? LIMITS.pageSizeDefault;
  return { number: num, size: Math.min(size, LIMITS.pageSizeMax) };
}

function positiveInt(raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n)) return undefined;
  const i = Math.trunc(n);
  if (i < 1) return 1;
  return Math.min(i, 1_000_000_000);
}

// ---- response documents ----

const identifier = z.object({ id: z.string(), type: z.string() });
/** A relationship: resource linkage, links and meta, as JSON:API allows (members beyond those pass through). */
const relationship = z
  .looseObject({
    data: z.union([identifier, z.array(identifier), z.null()]).optional(),
    links: z.record(z.string(), z.string()).optional(),
    meta: z.record(z.string(), z.unknown()).optional(),
  })
  .openapi("Relationship");
const resourceLinks = z.record(z.string(), z.string());

/** Any resource, as `included` carries them (each endpoint of its own type describes it fully). */
const includedResource = z
  .object({
    id: z.string(),
    type: z.string(),
    attributes: z.record(z.string(), z.unknown()).optional(),
    relationships: z.record(z.string(), relationship).optional(),
    links: resourceLinks.optional(),
  })
  .openapi("IncludedResource");

const pagination = z
  .object({
    "current-page": z.number().int(),
    "page-size": z.number().int(),
    "prev-page": z.number().int().nullable(),
    "next-page": z.number().int().nullable(),
    "total-pages": z.number().int(),
    "total-count": z.number().int(),
  })
  .openapi("Pagination");

type AttributeShape = Record<string, z.ZodType>;

/** Component names of the resource schemas, for their documents' names. */
const resourceNames = new WeakMap<z.ZodType, string>();

/**
 * A resource of one type (or one of a few, for resources answered in the type the request named): its id, its
 * type and exactly these attributes; an attribute a serialiser emits and the schema lacks fails response
 * validation (test/openapi-responses.ts checks every response of the tests). Relationships and links are described generically.
 */
export function resourceSchema<const T extends string>(name: string, type: T | readonly [T, ...T[]], attributes: AttributeShape) {
  const schema = z
    .object({
      id: z.string(),
      type: typeof type === "string" ? z.literal(type) : z.enum(type),
      attributes: z.strictObject(attributes),
      relationships: z.record(z.string(), relationship).optional(),
      links: resourceLinks.optional(),
    })
    .openapi(name);
  resourceNames.set(schema, name);
  return schema;
}
type ResourceSchema = ReturnType<typeof resourceSchema>;

const documents = new WeakMap<ResourceSchema, { one?: z.ZodType; list?: z.ZodType }>();
/** Each resource's document schemas are made once: a component name may be registered only once. */
function memo<D extends z.ZodType>(resource: ResourceSchema, kind: "one" | "list", make: () => D): D {
  const entry = documents.get(resource) ?? {};
  documents.set(resource, entry);
  entry[kind] ??= make();
  return entry[kind] as D;
}

/** A document whose `data` is one resource of the schema's type (`included` may carry others). */
export function resourceDocument(resource: ResourceSchema) {
  return memo(resource, "one", () =>
    z
      .object({
        data: resource,
        included: z.array(includedResource).optional(),
        links: z.record(z.string(), z.string().nullable()).optional(),
        meta: z.record(z.string(), z.unknown()).optional(),
      })
      .openapi(`${nameOf(resource)}Document`),
  );
}

/** A document whose `data` is a list of resources of the schema's type; paginated lists carry `meta.pagination`. */
export function listDocument(resource: ResourceSchema) {
  return memo(resource, "list", () =>
    z
      .object({
        data: z.array(resource),
        included: z.array(includedResource).optional(),
        links: z.record(z.string(), z.string().nullable()).optional(),
        meta: z.looseObject({ pagination: pagination.optional() }).optional(),
      })
      .openapi(`${nameOf(resource)}List`),
  );
}

function nameOf(resource: ResourceSchema): string {
  const name = resourceNames.get(resource);
  if (!name) throw new Error("not a resource schema (declare it with resourceSchema)");
  return name;
}

/** Attribute value shapes the serialisers share. */
export const attr = {
  /** An ISO 8601 timestamp. */
  time: z.string(),
  nullableTime: z.string().nullable(),
  string: z.string(),
  nullableString: z.string().nullable(),
  boolean: z.boolean(),
  int: z.number().int(),
  nullableInt: z.number().int().nullable(),
  strings: z.array(z.string()),
  /** A `permissions` object: what the caller may do with the resource. */
  permissions: z.record(z.string(), z.boolean()),
  /** A value the client sent or the state holds, of any JSON type. */
  json: z.unknown(),
} as const;
