/** The floor's only activity: does nothing, so what is measured is Temporal's own path. */
export async function noop(): Promise<string> {
  return 'ok';
}
