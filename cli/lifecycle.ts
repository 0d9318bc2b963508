/**
 * Ordered shutdown: parts are stopped in the reverse order they started (api before worker
 * before Temporal before Postgres), once, on SIGINT/SIGTERM or when a part fails.
 */
export class Lifecycle {
  private readonly parts: { name: string; stop: () => Promise<unknown> }[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: (line: string) => void) {}

  /** Call as soon as there is something to stop: a signal may arrive while the part starts. */
  add(name: string, stop: () => Promise<unknown>): void {
    this.parts.push({ name, stop });
    // Start-up goes on after a signal until it fails: what it still starts is stopped too.
    if (this.stopping) this.stopping = this.stopping.then(() => this.stopParts());
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Stops everything on the first signal; a second one says it is still stopping. */
  handleSignals(): void {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.on(signal, () => {
        if (this.stopping) {
          this.log('Still shutting down…');
          return;
        }
        this.log(`\n${signal} received, shutting down`);
        this.shutdown().then(
          () => process.exit(0),
          () => process.exit(1),
        );
      });
    }
  }

  /** Resolves once every part is stopped, including parts added while it runs. */
  async shutdown(): Promise<void> {
    this.stopping ??= this.stopParts();
    for (let awaited: Promise<void> | undefined; awaited !== this.stopping; ) {
      awaited = this.stopping;
      await awaited;
    }
  }

  private async stopParts(): Promise<void> {
    for (const part of this.parts.splice(0).reverse()) {
      const started = Date.now();
      try {
        await part.stop();
        // Each step's time, so a slow shutdown shows which part held it up.
        this.log(`Stopped ${part.name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      } catch (error) {
        this.log(`Stopping ${part.name} failed: ${(error as Error).message}`);
      }
    }
  }
}
