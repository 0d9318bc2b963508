/**
 * A provider's settings and credentials, checked from the create input by its type's definition
 * (providers/<vendor>/definition.ts, handed in as deps.providerTypes) and shaped as stored:
 * settings as strings in providers.settings, credentials as plaintext to be encrypted. Secrets
 * (a Twilio auth token, an SMPP password) are never echoed, not even in an error.
 */
import { isSupportedCountry } from 'libphonenumber-js/max';
import {
  type ProviderConfig,
  type ProviderDefinition,
  type ProviderFieldsInput,
  ProviderFieldsRefusal,
} from '../../domain/provider-definition.js';
import { allOf, fieldsOf, InputError, invalid, refuseAll } from '../input.js';

/** The common fields of a provider's create input that are not its type's own. */
export interface ProviderSettingsInput {
  countries?: string[];
  /** The type's own fields by name (`baseUrl`, `accountSid`, `host`...), as given. */
  fields?: ProviderFieldsInput;
}

const field = fieldsOf<ProviderSettingsInput & { type: string }>();

/** A field only another type takes is refused, not ignored. */
function refuseFieldsOfOtherTypes(
  fields: ProviderFieldsInput,
  type: ProviderDefinition,
  types: readonly ProviderDefinition[],
) {
  for (const owner of types) {
    if (owner === type) continue;
    const given = owner.fields.find((own) => !own.shared && fields[own.name] !== undefined);
    if (given)
      throw invalid`${{ field: given.name }} applies only to ${field('type')} ${owner.type}`;
  }
}

/** The destinations the provider serves, as stored (`AU,NZ`); none given: every country. */
function countriesSetting(countries: string[] | undefined): string | undefined {
  if (countries === undefined) return undefined;
  const codes = countries.map((code) => code.trim().toUpperCase());
  const unknown = codes.find((code) => !isSupportedCountry(code));
  if (unknown !== undefined)
    throw invalid`${field('countries')}: "${unknown}" is not an ISO 3166 alpha-2 country code`;
  return [...new Set(codes)].join(',');
}

/**
 * The settings and credentials of a provider of `type`: its type's fields (the first refusal of
 * them) and the countries, each refused on its own so a form shows both at once.
 */
export function providerConfig(
  input: ProviderSettingsInput,
  type: ProviderDefinition,
  types: readonly ProviderDefinition[],
): ProviderConfig {
  const fields = input.fields ?? {};
  const refusals = refuseAll();
  const config = refusals.check(() => {
    refuseFieldsOfOtherTypes(fields, type, types);
    try {
      return type.configure(fields);
    } catch (error) {
      if (!(error instanceof ProviderFieldsRefusal)) throw error;
      const all = [error.parts, ...error.more].map(
        (parts) => new InputError('validation_failed', [...parts]),
      );
      throw allOf(all);
    }
  });
  const countries = refusals.check(() => countriesSetting(input.countries));
  refusals.done();
  const checked = config as ProviderConfig;
  if (countries) checked.settings.countries = countries;
  return checked;
}
