/**
 * Ordered shutdown: parts are stopped in the reverse order they started (api before worker
 * before Temporal before Postgres), once, on SIGINT/SIGTERM or when a part fails.
 */
export class Lifecycle {
  private readonly parts: { name: string; stop: () => Promise<unknown> }[] = [];
  private stopping: Promise<void> | undefined;

  constructor(private readonly log: (line: string) => void) {}

  add(name: string, stop: () => Promise<unknown>): void {
    this.parts.push({ name, stop });
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

  shutdown(): Promise<void> {
    this.stopping ??= (async () => {
      for (const part of this.parts.splice(0).reverse()) {
        try {
          await part.stop();
        } catch (error) {
          this.log(`Stopping ${part.name} failed: ${(error as Error).message}`);
        }
      }
    })();
    return this.stopping;
  }
}
