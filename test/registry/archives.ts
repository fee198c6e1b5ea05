// Test archives for the registry: a minimal ustar writer and gzip through CompressionStream, so a test can build any
// module archive, including the malformed ones the registry must refuse.

import { concat } from "../vcs/tar";

export interface TarEntry {
  name: string;
  data?: string | Uint8Array;
  /** tar type flag: "0" file (default), "5" directory, "2" symlink, "1" hard link, "x" pax header… */
  type?: string;
  linkname?: string;
  /** Overrides the size field (a header that lies about its size). */
  size?: number;
}

const enc = new TextEncoder();

function writeString(h: Uint8Array, off: number, len: number, s: string): void {
  h.set(enc.encode(s).subarray(0, len), off);
}

function octal(h: Uint8Array, off: number, len: number, n: number): void {
  writeString(h, off, len, `${n.toString(8).padStart(len - 1, "0")}\0`);
}

export function tar(entries: TarEntry[], opts: { end?: boolean } = {}): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const data = typeof e.data === "string" ? enc.encode(e.data) : (e.data ?? new Uint8Array());
    const h = new Uint8Array(512);
    writeString(h, 0, 100, e.name);
    octal(h, 100, 8, 0o644);
    octal(h, 108, 8, 0);
    octal(h, 116, 8, 0);
    octal(h, 124, 12, e.size ?? data.length);
    octal(h, 136, 12, 0);
    h.fill(32, 148, 156);
    writeString(h, 156, 1, e.type ?? "0");
    writeString(h, 157, 100, e.linkname ?? "");
    writeString(h, 257, 6, "ustar\0");
    writeString(h, 263, 2, "00");
    let sum = 0;
    for (const b of h) sum += b;
    writeString(h, 148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
    parts.push(h, data, new Uint8Array((512 - (data.length % 512)) % 512));
  }
  if (opts.end !== false) parts.push(new Uint8Array(1024));
  return concat(parts);
}

export async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new CompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export const tarGz = async (entries: TarEntry[]) => gzip(tar(entries));

/** A small valid module: an input, an output, a submodule and an example. */
export const MODULE_FILES: TarEntry[] = [
  {
    name: "main.tf",
    data: `variable "name" {
  type        = string
  description = "The name of \\"it\\""
}

variable "size" {
  type    = number
  default = 3
}

# a comment with { braces
resource "null_resource" "this" {
  triggers = { name = "\${var.name}-}" }
}

output "id" {
  description = "The resource's id"
  value       = null_resource.this.id
}
`,
  },
  { name: "README.md", data: "# Example module\n" },
  { name: "modules/child/", type: "5" },
  { name: "modules/child/main.tf", data: 'variable "x" {}\noutput "y" { value = 1 }\n' },
  { name: "examples/basic/main.tf", data: 'module "m" {\n  source = "../.."\n  name = "n"\n}\n' },
];
