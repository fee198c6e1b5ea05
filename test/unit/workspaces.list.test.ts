// The list query's rules (src/workspaces/workspaces.filters.ts): filters, sort and page from the query string.
import { describe, expect, it } from "vitest";
import { parseListQuery } from "../../src/workspaces/workspaces.filters";

describe("list query rules", () => {
  const spec = (q: string) => parseListQuery({ ...Object.fromEntries(new URLSearchParams(q)), "page[number]": "2", "page[size]": "10" }).spec;

  it("reads every filter, the sort and the page", () => {
    const s = spec(
      "search[name]=app&search[tags]=a,b,a&search[exclude-tags]=c&filter[project][id]=prj-1&filter[tagged][0][key]=env&filter[tagged][0][value]=prod&sort=-name",
    );
    expect(s).toMatchObject({ sort: "-name", limit: 10, offset: 10 });
    expect(s.filters).toMatchObject({ tags: ["a", "b"], excludeTags: ["c"], projectId: "prj-1", tagged: [{ key: "env", value: "prod" }], nothing: false });
    expect(s.filters.names[0]).toMatchObject({ literal: "app" });
  });

  it("takes * in wildcard names only at the ends, keeps every other character literal, and matches nothing for NUL", () => {
    expect(spec("search[wildcard-name]=*-prod").filters.names).toEqual([{ literal: "-prod", mode: "suffix" }]);
    expect(spec("search[wildcard-name]=prod-*").filters.names).toEqual([{ literal: "prod-", mode: "prefix" }]);
    expect(spec("search[wildcard-name]=*a*b*").filters.names).toEqual([{ literal: "a*b", mode: "contains" }]);
    expect(spec("search[wildcard-name]=a*b").filters.names).toEqual([{ literal: "a*b", mode: "exact" }]);
    expect(spec("search[wildcard-name]=*").filters.names).toEqual([]);
    expect(spec("search[name]=50%25_off").filters.names).toEqual([{ literal: "50%_off", mode: "contains" }]);
    expect(spec("search[name]=a%00b").filters.nothing).toBe(true);
  });

  it("answers 400 naming the parameter for an unknown sort or a value without a key", () => {
    expect(() => spec("sort=size")).toThrow(expect.objectContaining({ status: 400 }));
    expect(() => spec("filter[tagged][0][value]=x")).toThrow(expect.objectContaining({ status: 400 }));
  });
});
