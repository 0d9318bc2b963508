/**
 * Every provider type (one definition per vendor folder), as the composition roots hand it to the
 * use-cases (CommandDeps.providerTypes): the HTTP app, the CLI's admin commands and the worker.
 */
import type { ProviderDefinition } from '../domain/provider-definition.js';
import { PROVIDER_DEFINITIONS } from '../providers/registry.js';

export const PROVIDER_TYPES: readonly ProviderDefinition[] = PROVIDER_DEFINITIONS;

/** `deps` with every provider type, unless it names its own. */
export function withProviderTypes<Deps extends object>(
  deps: Deps & { providerTypes?: readonly ProviderDefinition[] },
): Deps & { providerTypes: readonly ProviderDefinition[] } {
  return { ...deps, providerTypes: deps.providerTypes ?? PROVIDER_TYPES };
}
