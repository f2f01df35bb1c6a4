/**
 * Where Idempotency-Keys live: Redis, shared by every gateway (redis-idempotency.store.ts),
 * or, for a lone gateway without REDIS_URL, its memory. Values are opaque strings; each
 * operation is atomic, so two gateways never both claim a slot.
 */
export abstract class IdempotencyStore {
  /** Writes `value` at an empty slot for `ttlMs` and answers null; else answers what is there. */
  abstract claim(slot: string, value: string, ttlMs: number): Promise<string | null>;

  /** Writes `value` for `ttlMs` where the slot still holds `expected`; else changes nothing. */
  abstract replace(slot: string, expected: string, value: string, ttlMs: number): Promise<void>;

  /** Empties the slot where it still holds `expected`; else changes nothing. */
  abstract release(slot: string, expected: string): Promise<void>;
}

// Every this many claims, slots past their time are dropped (a read drops its own too).
const SWEEP_EVERY = 1000;

/** Slots in this gateway's memory, each until its time runs out. */
export class InMemoryIdempotencyStore extends IdempotencyStore {
  private readonly slots = new Map<string, { value: string; expiresAtMs: number }>();
  private claims = 0;

  constructor(private readonly now: () => number = Date.now) {
    super();
  }

  claim(slot: string, value: string, ttlMs: number): Promise<string | null> {
    if (++this.claims % SWEEP_EVERY === 0) this.sweep();
    const held = this.held(slot);
    if (held !== undefined) return Promise.resolve(held);
    this.slots.set(slot, { value, expiresAtMs: this.now() + ttlMs });
    return Promise.resolve(null);
  }

  replace(slot: string, expected: string, value: string, ttlMs: number): Promise<void> {
    if (this.held(slot) === expected)
      this.slots.set(slot, { value, expiresAtMs: this.now() + ttlMs });
    return Promise.resolve();
  }

  release(slot: string, expected: string): Promise<void> {
    if (this.held(slot) === expected) this.slots.delete(slot);
    return Promise.resolve();
  }

  private held(slot: string): string | undefined {
    const entry = this.slots.get(slot);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs > this.now()) return entry.value;
    this.slots.delete(slot);
    return undefined;
  }

  private sweep(): void {
    const now = this.now();
    for (const [slot, entry] of this.slots) if (entry.expiresAtMs <= now) this.slots.delete(slot);
  }
}
