import { setTimeout as sleep } from 'node:timers/promises';
import { ApiError } from '@pgcloud/api-client';
import type { Output } from './output.js';

/** Where long work stands: its phase and, when known, bytes and time left. */
export interface ProgressState {
  phase: string;
  bytesDone?: number;
  bytesTotal?: number;
  /** Seconds left, when the API says; otherwise estimated from the bytes' rate. */
  etaSeconds?: number;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** 1536 → "1.5 KiB". */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}

/** 75 → "1m15s". */
export function formatSeconds(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  return whole < 60
    ? `${whole}s`
    : `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
}

/**
 * Shows long work on stderr (docs/cli.md): on a terminal, one live line
 * with a spinner, the phase, bytes and ETA; otherwise a plain line at each new phase and
 * at every tenth of the bytes. Nothing with `--quiet`.
 */
export class Progress {
  #state: ProgressState | undefined;
  #frame = 0;
  #timer: NodeJS.Timeout | undefined;
  #lastPhase: string | undefined;
  #lastTenth = -1;
  #started = Date.now();
  #firstBytes: { at: number; bytes: number } | undefined;

  constructor(
    private readonly out: Output,
    private readonly label: string,
  ) {
    if (out.interactive) {
      this.#timer = setInterval(() => this.#draw(), 100);
      this.#timer.unref();
    }
  }

  update(state: ProgressState): void {
    if (state.bytesDone !== undefined && state.bytesDone > 0 && !this.#firstBytes)
      this.#firstBytes = { at: Date.now(), bytes: state.bytesDone };
    this.#state = state;
    if (this.out.mode.quiet) return;
    if (this.out.interactive) this.#draw();
    else this.#plain(state);
  }

  /** Ends the display; the live line is cleared so the final answer stands alone. */
  finish(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.out.interactive) this.out.stderr.write('\r\x1b[2K');
  }

  /** The text of the current state: "phase  1.0 MiB / 4.0 MiB (25%)  ETA 3s". */
  describe(state: ProgressState): string {
    const parts = [`${this.label}: ${state.phase}`];
    if (state.bytesDone !== undefined) {
      const total = state.bytesTotal;
      parts.push(
        total
          ? `${formatBytes(state.bytesDone)} / ${formatBytes(total)} (${Math.floor((100 * state.bytesDone) / total)}%)`
          : formatBytes(state.bytesDone),
      );
    }
    const eta = state.etaSeconds ?? this.#estimate(state);
    if (eta !== undefined) parts.push(`ETA ${formatSeconds(eta)}`);
    parts.push(formatSeconds((Date.now() - this.#started) / 1000));
    return parts.join('  ');
  }

  #estimate(state: ProgressState): number | undefined {
    const first = this.#firstBytes;
    if (!first || state.bytesDone === undefined || !state.bytesTotal) return undefined;
    const seconds = (Date.now() - first.at) / 1000;
    const rate = (state.bytesDone - first.bytes) / seconds;
    if (seconds < 1 || rate <= 0) return undefined;
    return (state.bytesTotal - state.bytesDone) / rate;
  }

  #draw(): void {
    if (!this.#state) return;
    this.#frame = (this.#frame + 1) % FRAMES.length;
    const width = this.out.stderr.columns ?? 80;
    const line = `${FRAMES[this.#frame]} ${this.describe(this.#state)}`.slice(0, width - 1);
    this.out.stderr.write(`\r\x1b[2K${line}`);
  }

  #plain(state: ProgressState): void {
    const tenth =
      state.bytesDone !== undefined && state.bytesTotal
        ? Math.floor((10 * state.bytesDone) / state.bytesTotal)
        : -1;
    if (state.phase === this.#lastPhase && tenth <= this.#lastTenth) return;
    this.#lastPhase = state.phase;
    this.#lastTenth = tenth;
    this.out.stderr.write(`${this.describe(state)}\n`);
  }
}

/**
 * Reads a resource every `intervalMs` until `done` says so, showing its progress; answers
 * the final state. A 429 only slows the reading down: a long wait must not fail because
 * the user's rate-limit bucket ran dry. The display ends whether the work succeeded or
 * the reading failed.
 */
export async function pollUntil<T>(options: {
  read: () => Promise<T>;
  done: (value: T) => boolean;
  state: (value: T) => ProgressState;
  progress: Progress;
  intervalMs?: number;
}): Promise<T> {
  const interval = options.intervalMs ?? 1000;
  let limited = 0;
  try {
    for (;;) {
      let value: T;
      try {
        value = await options.read();
        limited = 0;
      } catch (error) {
        if (!(error instanceof ApiError && error.status === 429) || limited >= 30) throw error;
        limited += 1;
        await sleep(interval * Math.min(2 ** limited, 10));
        continue;
      }
      options.progress.update(options.state(value));
      if (options.done(value)) return value;
      await sleep(interval);
    }
  } finally {
    options.progress.finish();
  }
}
