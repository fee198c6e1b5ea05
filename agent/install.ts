/**
 * Installs the Terraform a job asks for on first use: downloads the zip of the listed build for this machine, checks
 * its SHA-256 against the service's list, and, when the release publishes a signed SHA256SUMS, checks that file's
 * OpenPGP signature against the trusted release keys (HashiCorp's, agent/hashicorp-key.ts, or `--releases-key`) and
 * that it names the same SHA-256. The zip's `terraform` is unpacked into a directory of its own under the cache,
 * `<cache>/<version>_<arch>_<sha12>/`, run once (`probe`: in the job sandbox) to learn the version it reports, and
 * kept: the next job of that version runs it without downloading. A version that cannot be installed is an
 * InstallError saying why; nothing half-installed is ever used (the directory appears by one rename, complete).
 */
import { createHash } from "node:crypto";
import { createWriteStream, existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import * as openpgp from "openpgp";
import yauzl from "yauzl";
import type { JobTerraform, TerraformBuild } from "./protocol.ts";

export class InstallError extends Error {}

/** Node's name for this machine's architecture → the releases' name. */
export function releaseArch(nodeArch: string = process.arch): string {
  return nodeArch === "x64" ? "amd64" : nodeArch;
}

export interface InstallerOptions {
  /** Where versions are kept, one directory each. */
  cacheDir: string;
  /** Armored OpenPGP public keys trusted to sign SHA256SUMS files. */
  releasesKeys: string;
  /** Runs `<bin> version -json` (in the sandbox jobs get) and answers the version it reports. */
  probe: (bin: string, dir: string) => Promise<string>;
  fetch?: typeof fetch;
  /** Bounds each download (default 10 minutes). */
  timeoutMs?: number;
  /** The machine's architecture as the releases name it (default this one's). */
  arch?: string;
  log?: (message: string) => void;
}

export interface Installed {
  bin: string;
  /** The version the binary reports. */
  version: string;
  /** Whether this call downloaded it (false: the cache had it). */
  downloaded: boolean;
}

const ZIP_MAX_BYTES = 512 * 1024 * 1024;
const BINARY_MAX_BYTES = 1024 * 1024 * 1024;
const SUMS_MAX_BYTES = 1024 * 1024;

export class TerraformInstaller {
  private readonly opts: InstallerOptions;
  private readonly inflight = new Map<string, Promise<Installed>>();
  private keys: Promise<openpgp.PublicKey[]> | null = null;

  constructor(options: InstallerOptions) {
    this.opts = options;
  }

  /** The binary of the job's version, installed first when the cache does not have it. */
  ensure(t: JobTerraform): Promise<Installed> {
    const arch = this.opts.arch ?? releaseArch();
    const build = t.archs.find((b) => b.os === "linux" && b.arch === arch);
    if (process.platform !== "linux") return Promise.reject(new InstallError(`the agent installs Terraform on Linux only (this is ${process.platform})`));
    if (!build) {
      const offered = t.archs.map((b) => `${b.os}/${b.arch}`).join(", ");
      return Promise.reject(
        new InstallError(
          offered
            ? `the service lists no linux/${arch} build of Terraform ${t.version} (only ${offered})`
            : `the service lists no download for Terraform ${t.version}; add one (the admin Terraform versions API), or pin this agent to a local binary of that version with --terraform`,
        ),
      );
    }
    if (!/^[0-9a-f]{64}$/i.test(build.sha)) return Promise.reject(new InstallError(`the service lists no SHA-256 for Terraform ${t.version}`));
    const dir = join(this.opts.cacheDir, `${t.version.replace(/[^0-9A-Za-z.-]/g, "_")}_${arch}_${build.sha.toLowerCase().slice(0, 12)}`);
    const key = dir;
    let running = this.inflight.get(key);
    if (!running) {
      running = this.install(t, build, dir).finally(() => this.inflight.delete(key));
      this.inflight.set(key, running);
    }
    return running;
  }

  private async install(t: JobTerraform, build: TerraformBuild, dir: string): Promise<Installed> {
    const bin = join(dir, "terraform");
    const cached = await this.cached(dir);
    if (cached) return { bin, version: cached, downloaded: false };
    await mkdir(this.opts.cacheDir, { recursive: true });
    const work = await mkdtemp(join(this.opts.cacheDir, ".install-"));
    try {
      const zip = join(work, "terraform.zip");
      const sha = await this.download(build.url, zip);
      if (sha !== build.sha.toLowerCase()) {
        throw new InstallError(`the download of ${build.url} has SHA-256 ${sha}, not the ${build.sha.toLowerCase()} the service lists`);
      }
      if (t.shasumsUrl && t.shasumsSignatureUrl) await this.checkSignedSums(t, build, sha);
      const unpacked = join(work, "unpacked");
      await mkdir(unpacked);
      await unzipTerraform(zip, join(unpacked, "terraform"));
      await rm(zip);
      let reported: string;
      try {
        reported = await this.opts.probe(join(unpacked, "terraform"), unpacked);
      } catch (err) {
        throw new InstallError(`the downloaded terraform does not run: ${message(err)}`);
      }
      if (reported !== t.version) throw new InstallError(`the download listed as Terraform ${t.version} is Terraform ${reported}`);
      await writeFile(join(unpacked, "version"), `${reported}\n`);
      try {
        await rename(unpacked, dir);
      } catch (err) {
        // Another agent sharing the cache finished first: its copy is the same checked build.
        const other = await this.cached(dir);
        if (!other) throw err;
      }
      this.opts.log?.(`installed Terraform ${reported} in ${dir}`);
      return { bin, version: reported, downloaded: true };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }

  private async cached(dir: string): Promise<string | null> {
    if (!existsSync(join(dir, "terraform"))) return null;
    try {
      return (await readFile(join(dir, "version"), "utf8")).trim() || null;
    } catch {
      return null;
    }
  }

  private async get(url: string): Promise<Response> {
    let res: Response;
    try {
      res = await (this.opts.fetch ?? fetch)(url, { signal: AbortSignal.timeout(this.opts.timeoutMs ?? 600_000), redirect: "follow" });
    } catch (err) {
      throw new InstallError(`${url} could not be downloaded: ${message(err)}`);
    }
    if (!res.ok || !res.body) {
      await res.body?.cancel();
      throw new InstallError(`${url} answered ${res.status}`);
    }
    return res;
  }

  /** Streams `url` into `file`, answering its SHA-256. */
  private async download(url: string, file: string): Promise<string> {
    const res = await this.get(url);
    const hash = createHash("sha256");
    let size = 0;
    const body = Readable.fromWeb(res.body as import("node:stream/web").ReadableStream<Uint8Array>);
    body.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > ZIP_MAX_BYTES) body.destroy(new InstallError(`${url} is larger than ${ZIP_MAX_BYTES} bytes`));
      hash.update(chunk);
    });
    try {
      await pipeline(body, createWriteStream(file, { mode: 0o600 }));
    } catch (err) {
      throw err instanceof InstallError ? err : new InstallError(`${url} could not be downloaded: ${message(err)}`);
    }
    return hash.digest("hex");
  }

  private async small(url: string): Promise<Uint8Array> {
    const res = await this.get(url);
    const bytes = new Uint8Array(await res.arrayBuffer());
    if (bytes.byteLength > SUMS_MAX_BYTES) throw new InstallError(`${url} is larger than ${SUMS_MAX_BYTES} bytes`);
    return bytes;
  }

  /** SHA256SUMS signed by a trusted key, naming this build's file with this SHA-256. */
  private async checkSignedSums(t: JobTerraform, build: TerraformBuild, sha: string): Promise<void> {
    const [sums, sig] = await Promise.all([this.small(t.shasumsUrl as string), this.small(t.shasumsSignatureUrl as string)]);
    this.keys ??= openpgp.readKeys({ armoredKeys: this.opts.releasesKeys });
    let keys: openpgp.PublicKey[];
    try {
      keys = await this.keys;
    } catch (err) {
      this.keys = null;
      throw new InstallError(`the trusted release keys cannot be read: ${message(err)}`);
    }
    try {
      const text = new TextDecoder().decode(sig);
      const signature = text.startsWith("-----BEGIN PGP SIGNATURE-----")
        ? await openpgp.readSignature({ armoredSignature: text })
        : await openpgp.readSignature({ binarySignature: sig });
      const signed = await openpgp.createMessage({ binary: sums });
      const { signatures } = await openpgp.verify({ message: signed, signature, verificationKeys: keys, expectSigned: true });
      await Promise.all(signatures.map((s) => s.verified));
    } catch (err) {
      throw new InstallError(`the signature of ${t.shasumsUrl} does not verify with the trusted release keys: ${message(err)}`);
    }
    const name = basename(new URL(build.url).pathname);
    const line = new TextDecoder()
      .decode(sums)
      .split("\n")
      .map((l) => /^([0-9a-fA-F]{64})\s+\*?(\S+)\s*$/.exec(l))
      .find((m) => m?.[2] === name);
    if (!line) throw new InstallError(`${t.shasumsUrl} does not name ${name}`);
    if (line[1].toLowerCase() !== sha) throw new InstallError(`${t.shasumsUrl} gives ${name} the SHA-256 ${line[1].toLowerCase()}, not ${sha}`);
  }
}

/** Extracts the zip's top-level `terraform` (and nothing else) to `out`, executable. */
function unzipTerraform(zip: string, out: string): Promise<void> {
  return new Promise((resolve, reject) => {
    yauzl.open(zip, { lazyEntries: true, strictFileNames: true }, (err, file) => {
      if (err || !file) return reject(new InstallError(`the download is not a zip archive: ${err?.message ?? "empty"}`));
      let found = false;
      const fail = (e: unknown) => {
        file.close();
        reject(e instanceof InstallError ? e : new InstallError(`the zip archive cannot be read: ${message(e)}`));
      };
      file.on("error", fail);
      file.on("end", () => (found ? resolve() : reject(new InstallError("the zip archive has no terraform binary at its top"))));
      file.on("entry", (entry: yauzl.Entry) => {
        if (entry.fileName !== "terraform") return file.readEntry();
        if (entry.uncompressedSize > BINARY_MAX_BYTES) return fail(new InstallError("the terraform binary in the zip archive is too large"));
        file.openReadStream(entry, (e, stream) => {
          if (e || !stream) return fail(e);
          pipeline(stream, createWriteStream(out, { mode: 0o700 }))
            .then(() => chmod(out, 0o755))
            .then(() => {
              found = true;
              file.readEntry();
            }, fail);
        });
      });
      file.readEntry();
    });
  });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
