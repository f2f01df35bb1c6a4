import { setTimeout as sleep } from 'node:timers/promises';

/**
 * How the stand-ins follow the API: `step` every `pollMs` until stopped. A failing step
 * (the API going away at the end of a test, say) is said once, under `name`, and tried
 * again; a stop waits for the step under way.
 */
export class PollLoop {
  private running = true;
  private readonly done: Promise<void>;
  private lastError?: string;

  constructor(name: string, step: () => Promise<void>, pollMs = 100) {
    this.done = this.run(name, step, pollMs);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  private async run(name: string, step: () => Promise<void>, pollMs: number): Promise<void> {
    while (this.running) {
      try {
        await step();
        this.lastError = undefined;
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (message !== this.lastError) console.error(`${name}: ${message}`);
        this.lastError = message;
      }
      await sleep(pollMs);
    }
  }
}
