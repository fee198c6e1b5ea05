// The run page's log rendering: framing removed, colours kept as classes, every other escape and control dropped.
import { describe, expect, it } from "vitest";
import { decodeLog, renderLog } from "../../src/ui/runs/run-log.view";

const ESC = "\u001b";

describe("renderLog", () => {
  it("drops STX and ETX and reports whether the log is complete", () => {
    expect(renderLog("\u0002Plan: 1 to add\n")).toEqual({ spans: [{ text: "Plan: 1 to add\n", cls: null }], complete: false });
    expect(renderLog("\u0002done\n\u0003")).toEqual({ spans: [{ text: "done\n", cls: null }], complete: true });
    expect(renderLog("")).toEqual({ spans: [], complete: false });
  });

  it("turns bold and foreground colours into classes, and a reset ends them", () => {
    const { spans } = renderLog(`${ESC}[1m${ESC}[32m+${ESC}[0m create\n${ESC}[31m-${ESC}[39m gone ${ESC}[91mbright${ESC}[0m`);
    expect(spans).toEqual([
      { text: "+", cls: "a-b a-f2" },
      { text: " create\n", cls: null },
      { text: "-", cls: "a-f1" },
      { text: " gone ", cls: null },
      { text: "bright", cls: "a-f1" },
    ]);
    // A bare ESC[m is a reset; 22 ends bold only; black and white stay the page's colour.
    expect(renderLog(`${ESC}[1;33ma${ESC}[22mb${ESC}[mc${ESC}[30md${ESC}[37me`).spans).toEqual([
      { text: "a", cls: "a-b a-f3" },
      { text: "b", cls: "a-f3" },
      { text: "cde", cls: null },
    ]);
  });

  it("drops other escapes (cursor moves, 256 colours' parameters, OSC titles) and control characters", () => {
    const { spans } = renderLog(`a${ESC}[2K${ESC}[1Gb${ESC}[38;5;196mc${ESC}[0m${ESC}]0;title\u0007d\r\ne\u0007\u0000\tf${ESC}(B`);
    expect(spans.map((s) => s.text).join("")).toBe("abcd\ne\tf");
    expect(spans.every((s) => s.cls === null)).toBe(true);
  });

  it("leaves markup as text: escaping is the renderer's job", () => {
    expect(renderLog('<script>alert(1)</script> & "q"').spans).toEqual([{ text: '<script>alert(1)</script> & "q"', cls: null }]);
  });

  it("decodes UTF-8, a character cut at the end becoming U+FFFD", () => {
    const bytes = new TextEncoder().encode("résumé ✓");
    expect(decodeLog(bytes)).toBe("résumé ✓");
    expect(decodeLog(bytes.subarray(0, bytes.length - 1))).toBe("résumé \uFFFD");
  });
});

describe("structured run output", () => {
  it("shows each JSON line as its message, a diagnostic with its detail, and other lines as they are", () => {
    const text = [
      "\u0002Terraform v1.11.4",
      JSON.stringify({ "@level": "info", "@message": "Plan: 1 to add, 0 to change, 0 to destroy.", type: "change_summary" }),
      JSON.stringify({ "@level": "error", "@message": "Error: Bad thing", diagnostic: { detail: "It broke." }, type: "diagnostic" }),
      '{"not": "a message"}',
      "\u0003",
    ].join("\n");
    const out = renderLog(text)
      .spans.map((s) => s.text)
      .join("");
    expect(out).toBe('Terraform v1.11.4\nPlan: 1 to add, 0 to change, 0 to destroy.\nError: Bad thing\nIt broke.\n{"not": "a message"}\n');
  });
});
