// The workspace field table (src/workspaces/workspace.fields.ts) that the request schema, the defaults, the update
// rules, the serialiser and the record upgrade read: checked row by row, so a new row is checked with the others.
import { describe, expect, it } from "vitest";
import { defaultSettings, FIELDS, fieldRows, upgradeSettings, wireNames, workspaceSettings } from "../../src/workspaces/workspace.fields";
import { workspaceAttributesInput } from "../../src/workspaces/workspaces.schemas";

describe("workspace field table", () => {
  it("gives every setting a default its stored type accepts", () => {
    const defaults = defaultSettings("1.14.0");
    expect(Object.keys(defaults)).toEqual(Object.keys(FIELDS));
    expect(workspaceSettings.parse(defaults)).toEqual(defaults);
    expect(defaults["engine-version"]).toBe("1.14.0");
  });

  it("fills a setting a stored record lacks with its upgrade value, and leaves a complete record as it is", () => {
    const defaults = defaultSettings("1.14.0");
    expect(upgradeSettings(defaults)).toBe(defaults);
    for (const [name, row] of fieldRows) {
      const { [name]: _dropped, ...older } = defaults;
      const upgraded = upgradeSettings(older as typeof defaults);
      expect(upgraded[name]).toEqual("upgrade" in row ? row.upgrade : defaults[name]);
      expect(workspaceSettings.safeParse(upgraded).success).toBe(true);
    }
  });

  it("accepts every setting and its aliases in requests, and shows each under names no other setting uses", () => {
    const shape = Object.keys(workspaceAttributesInput.shape);
    const shown: string[] = [];
    for (const [name, row] of fieldRows) {
      for (const accepted of [name, ...(row.aliases ?? [])]) expect(shape).toContain(accepted);
      shown.push(...wireNames(name, row));
    }
    expect(new Set(shown).size).toBe(shown.length);
  });
});
