import { fail, type Failure } from "../errors";
import { LIMITS } from "../limits";

/** Tag binding keys and values: alphanumerics and `_ . = + - @ :`. */
export const TAG_BINDING_CHARS = /^[A-Za-z0-9_.=+\-@:]+$/;
/** Flat tag names: letters, numbers, `:`, `-`, `_`, 1-255 characters. */
export const FLAT_TAG_NAME = /^[A-Za-z0-9:_-]+$/;
/** Prefixes reserved for the platform, in binding keys and flat tag names alike (case-insensitive). */
export const RESERVED_PREFIX = /^(hc|hcp):/i;

export interface BindingInput {
  key: string;
  value?: string | null;
}

/** What is wrong with a tag key (binding keys and reserved tag keys share the rules), or null. */
export type KeyProblem = "blank" | "too-long" | "characters" | "reserved-prefix";

export function keyProblem(key: string): KeyProblem | null {
  if (key.length === 0) return "blank";
  if (key.length > LIMITS.tagKeyMax) return "too-long";
  if (!TAG_BINDING_CHARS.test(key)) return "characters";
  if (RESERVED_PREFIX.test(key)) return "reserved-prefix";
  return null;
}

const KEY_DETAILS: Record<KeyProblem, string> = {
  blank: "Key can't be blank",
  "too-long": `Key is too long (maximum is ${LIMITS.tagKeyMax} characters)`,
  characters: "Key may only contain letters, numbers, and _ . = + - @ :",
  "reserved-prefix": "Key may not start with the reserved prefixes hc: or hcp:",
};

/** Validates key-value bindings as sent; `pointerBase` locates entry i as `${pointerBase}/${i}`. */
export function checkBindings(bindings: BindingInput[], pointerBase: string): Failure | null {
  for (const [i, b] of bindings.entries()) {
    const at = `${pointerBase}/${i}/attributes`;
    const problem = keyProblem(b.key);
    if (problem) return fail("invalid_attribute", KEY_DETAILS[problem], `${at}/key`);
    const v = b.value ?? "";
    if (v.length > LIMITS.tagValueMax) return fail("invalid_attribute", `Value is too long (maximum is ${LIMITS.tagValueMax} characters)`, `${at}/value`);
    if (v.length > 0 && !TAG_BINDING_CHARS.test(v))
      return fail("invalid_attribute", "Value may only contain letters, numbers, and _ . = + - @ :", `${at}/value`);
  }
  return null;
}

/**
 * A reserved tag key: a binding key's rules (so every reserved key can be bound), with the real service's texts,
 * which go-tfe matches: "Key can't be blank", "Key is invalid".
 */
export function checkReservedKey(key: string, pointer: string): Failure | null {
  const problem = keyProblem(key);
  if (!problem) return null;
  return fail("invalid_attribute", problem === "characters" || problem === "reserved-prefix" ? "Key is invalid" : KEY_DETAILS[problem], pointer);
}

export function checkFlatTagName(name: string, pointer: string): Failure | null {
  if (name.length === 0 || name.length > LIMITS.flatTagNameMax || !FLAT_TAG_NAME.test(name)) {
    return fail("invalid_attribute", "Tag name must be 1-255 characters: letters, numbers, colons, hyphens and underscores", pointer);
  }
  if (RESERVED_PREFIX.test(name)) return fail("invalid_attribute", "Tag name may not start with the reserved prefixes hc: or hcp:", pointer);
  return null;
}

/** A binding's value as stored: missing or null is the empty value of a key-only binding. */
export function bindingValue(value: string | null | undefined): string {
  return value ?? "";
}
