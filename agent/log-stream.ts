/**
 * The job's log on its way to the service: bytes are appended in order, each chunk at the offset of the bytes sent
 * before it, flushed at least every `flushMs` or once `chunkBytes` are pending. A Redactor (agent/redact.ts) in front
 * of it masks the job's secrets (sensitive variable values, the run token) should Terraform ever print one.
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
