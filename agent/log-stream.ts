/**
 * The job's log on its way to the service: bytes are appended in order, each chunk at the offset of the bytes sent
 * before it, flushed at least every `flushMs` or once `chunkBytes` are pending. A Redactor in front of it masks the
 * job's secrets (sensitive variable values, the run token) should Terraform ever print one.
 */
import type { Signal } from "./protocol.ts";

export interface LogStreamOptions {
  append: (offset: number, bytes: Uint8Array) => Promise<{ size: number; signal: Signal }>;
  /** Called with the signal each append answers. */
  onSignal?: (signal: Signal) => void;
  /** Called once when an append fails for good; later writes are dropped. */
  onError?: (err: unknown) => void;
  flushMs?: number;
  chunkBytes?: number;
  /** The most one request carries. */
  maxRequestBytes?: number;
}

export class LogStream {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private sent = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private sending: Promise<void> | null = null;
  private failure: unknown = null;
  private readonly opts: Required<Omit<LogStreamOptions, "onSignal" | "onError">> & Pick<LogStreamOptions, "onSignal" | "onError">;

  constructor(options: LogStreamOptions) {
    this.opts = { flushMs: 500, chunkBytes: 32 * 1024, maxRequestBytes: 1024 * 1024, ...options };
  }

  /** Bytes the service has acknowledged. */
  get offset(): number {
    return this.sent;
  }

  get failed(): unknown {
    return this.failure;
  }

  write(chunk: Uint8Array | string): void {
    if (this.failure) return;
    const buf = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : Buffer.from(chunk);
    if (buf.length === 0) return;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= this.opts.chunkBytes) this.kick();
    else if (!this.timer && !this.sending) this.timer = setTimeout(() => this.kick(), this.opts.flushMs);
  }

  /** Sends everything written so far; resolves once the service has it (or the stream failed). */
  async flush(): Promise<void> {
    while (this.pendingBytes > 0 && !this.failure) {
      this.kick();
      await this.sending;
    }
    await this.sending;
  }

  /** Flushes, then stops the timer. */
  async close(): Promise<void> {
    await this.flush();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private kick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.sending || this.failure) return;
    this.sending = this.drain().finally(() => {
      this.sending = null;
      // What arrived while the last request was out waits for the next tick of the timer (or the size threshold).
      if (this.pendingBytes > 0 && !this.failure) {
        if (this.pendingBytes >= this.opts.chunkBytes) this.kick();
        else if (!this.timer) this.timer = setTimeout(() => this.kick(), this.opts.flushMs);
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.pendingBytes > 0) {
      // Writes only push at the end, so the first `taken` buffers are this batch whatever arrives meanwhile.
      const taken = this.pending.length;
      const all = Buffer.concat(this.pending);
      const bytes = all.subarray(0, this.opts.maxRequestBytes);
      const rest = all.subarray(bytes.length);
      try {
        const res = await this.opts.append(this.sent, bytes);
        this.sent += bytes.length;
        this.pending = rest.length > 0 ? [rest, ...this.pending.slice(taken)] : this.pending.slice(taken);
        this.pendingBytes -= bytes.length;
        this.opts.onSignal?.(res.signal ?? null);
      } catch (err) {
        this.failure = err;
        this.pending = [];
        this.pendingBytes = 0;
        this.opts.onError?.(err);
        return;
      }
    }
  }
}

const MASK = Buffer.from("***");

/**
 * Masks secrets in a byte stream. A secret may straddle two chunks, so the shortest tail that could begin one is
 * held back until the next write (or `end`).
 */
export class Redactor {
  private readonly secrets: Buffer[];
  private held: Buffer = Buffer.alloc(0);
  private readonly out: (chunk: Buffer) => void;

  /** Secrets shorter than `minLength` are left alone: masking every "1" or "true" would wreck the log. */
  constructor(secrets: Iterable<string>, out: (chunk: Buffer) => void, minLength = 4) {
    const unique = new Set<string>();
    for (const s of secrets) if (s.length >= minLength) unique.add(s);
    // Longest first, so a secret containing another is masked whole.
    this.secrets = [...unique].map((s) => Buffer.from(s, "utf8")).sort((a, b) => b.length - a.length);
    this.out = out;
  }

  write(chunk: Uint8Array): void {
    if (this.secrets.length === 0) {
      if (chunk.length > 0) this.out(Buffer.from(chunk));
      return;
    }
    const data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : Buffer.from(chunk);
    const parts: Buffer[] = [];
    let pos = 0;
    for (;;) {
      let best = -1;
      let bestLen = 0;
      for (const s of this.secrets) {
        const i = data.indexOf(s, pos);
        if (i !== -1 && (best === -1 || i < best || (i === best && s.length > bestLen))) {
          best = i;
          bestLen = s.length;
        }
      }
      if (best === -1) break;
      parts.push(data.subarray(pos, best), MASK);
      pos = best + bestLen;
    }
    const rest = data.subarray(pos);
    const hold = this.partialTail(rest);
    parts.push(rest.subarray(0, rest.length - hold));
    this.held = Buffer.from(rest.subarray(rest.length - hold));
    const out = Buffer.concat(parts);
    if (out.length > 0) this.out(out);
  }

  end(): void {
    if (this.held.length > 0) this.out(this.held);
    this.held = Buffer.alloc(0);
  }

  /** The length of the longest tail of `buf` that is a proper prefix of some secret. */
  private partialTail(buf: Buffer): number {
    for (let k = Math.min(buf.length, this.secrets[0].length - 1); k > 0; k--) {
      const tail = buf.subarray(buf.length - k);
      for (const s of this.secrets) if (s.length > k && tail.equals(s.subarray(0, k))) return k;
    }
    return 0;
  }
}
