/**
 * What a provider type is to the rest of Herald. Each vendor folder (providers/simulator, twilio,
 * smpp) exports one `ProviderDefinition`; the composition roots (the api server, the CLI, the
 * worker) hand the list to the use-cases and the registry, so nothing else names a vendor.
 * Pure: the use-cases see the definitions through this interface and never import providers/.
 */
import type { z } from 'zod';
import type { Countries } from './phone.js';

/** The operator's provider: every workspace has it, it is never stored. */
export const OWN_PROVIDER_SLUG = 'own';
/** The `own` provider speaks the simulator's protocol (docs/contracts.md "Providers"). */
export const OWN_PROVIDER_TYPE = 'simulator';

/** A workspace provider as stored (db/providers.ts): settings as strings, credentials encrypted. */
export interface StoredProvider {
  id: number;
  workspaceId: number;
  slug: string;
  type: string;
  active: boolean;
  requiresSenderId: boolean;
  /** Null: the adapter's default. */
  messagesPerSecond: number | null;
  /** Non-secret settings, as the type's `settings` schema reads them; `countries` for every type. */
  settings: Record<string, string | undefined>;
  /** AES-256-GCM ciphertext (security/credentials.ts); never logged or returned. */
  credentials: Uint8Array | null;
}

/** The `own` provider of a workspace as a record of its type: the operator's, never stored. */
export function ownProviderRecord(
  workspaceId: number,
  baseUrl: string,
  messagesPerSecond: number | null = null,
): StoredProvider {
  return {
    id: 0,
    workspaceId,
    slug: OWN_PROVIDER_SLUG,
    type: OWN_PROVIDER_TYPE,
    active: true,
    requiresSenderId: false,
    messagesPerSecond,
    settings: { base_url: baseUrl },
    credentials: null,
  };
}

/** The destinations a workspace provider takes, as configured (`--countries`); else every one. */
export function declaredCountries(record: {
  settings: { countries?: string | undefined };
}): Countries {
  return record.settings.countries ? record.settings.countries.split(',') : 'all';
}

/** A delivery-receipt or reply webhook as it reached `/webhooks/...`. */
export interface ReceiptRequest {
  /** The URL the provider called: PUBLIC_URL's origin + the path and query as received. */
  url: string;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed body: JSON, or form fields (`application/x-www-form-urlencoded`). */
  body: unknown;
}

/** Herald's own delivery statuses; a vendor status it cannot map is kept as `unknown`. */
export type DeliveryStatus = 'delivered' | 'undelivered' | 'unknown';

export interface DeliveryReceipt {
  providerMessageId: string;
  reference: string | null;
  status: DeliveryStatus;
  errorCode: string | null;
  at: Date;
}

export type ReceiptParse =
  | { kind: 'receipt'; receipt: DeliveryReceipt }
  /** A reply posted to the receipt URL of the message it answers (the simulator's, whose reference names it). */
  | { kind: 'inbound'; message: InboundSms; reference: string }
  /** Authentic, but not a final status (e.g. Twilio's `sent`): acknowledged, nothing recorded. */
  | { kind: 'ignored' }
  /** The signature does not verify. */
  | { kind: 'forbidden' }
  | { kind: 'invalid'; message: string };

/** Verifies and parses the delivery receipts one provider posts. */
export interface ReceiptParser {
  parseReceipt(request: ReceiptRequest): ReceiptParse;
}

/** A message a recipient sent back (a mobile-originated reply), e.g. STOP or START. */
export interface InboundSms {
  from: string;
  to: string;
  body: string;
  /** The provider's id of the reply, when it gives one: a second delivery of it is not stored again. */
  providerMessageId: string | null;
}

export type InboundParse =
  | { kind: 'inbound'; message: InboundSms }
  | { kind: 'forbidden' }
  | { kind: 'invalid'; message: string };

/** What the use-cases ask of an adapter: the webhooks it posts (submissions are the worker's). */
export interface WebhookParser extends ReceiptParser {
  /** Verifies and parses a reply posted to `/webhooks/inbound/<workspace>/<slug>`, when the vendor posts them. */
  parseInbound?(request: ReceiptRequest): InboundParse;
}

/** What an adapter is made with beside its record. */
export interface AdapterContext {
  /** HERALD_SECRET: decrypts the credentials, derives receipt keys. */
  secret: string;
}

/**
 * One create field a type takes, named as the use-case's input names it (`accountSid`; the CLI
 * shows it as `--account-sid`), with how usage shows its value (`<AC…>`; none: a flag).
 */
export interface ProviderField {
  name: string;
  value?: string;
  required?: boolean;
  /** Also read by other types (a base URL): never refused as another type's field. */
  shared?: boolean;
  /** The key of providers.settings it is stored under (`base_url`): shown again on an edit form. */
  setting?: string;
  /**
   * The key of the encrypted credentials it is stored under (`auth_token`): write-only, never
   * shown again; left blank on an edit, the stored value is kept.
   */
  credential?: string;
}

/** Text fields of a provider's create input, by field name, as a form or the CLI gives them. */
export type ProviderFieldsInput = Readonly<Record<string, string | undefined>>;

/** A type's settings and credentials as stored: settings as strings, credentials in plaintext. */
export interface ProviderConfig {
  settings: Record<string, string>;
  /** Plaintext credentials: encrypted before they reach the database. */
  credentials: Record<string, string> | null;
}

/** A message part: text, or a field of the input named by reference (shown by each front end's label). */
export type RefusalPart = string | { readonly field: string };

/** A type's refusal of a create input; the use-case turns it into its input error. */
export class ProviderFieldsRefusal extends Error {
  override name = 'ProviderFieldsRefusal';
  readonly parts: readonly RefusalPart[];
  /** Refusals of other fields of the same input, for a form that shows them all at once. */
  readonly more: readonly (readonly RefusalPart[])[];

  constructor(parts: RefusalPart[], more: readonly (readonly RefusalPart[])[] = []) {
    super(parts.map((part) => (typeof part === 'string' ? part : part.field)).join(''));
    this.parts = parts;
    this.more = more;
  }
}

/** `` refuse`${field('host')} is required` ``: the parts of a refusal, thrown by `configure`. */
export function refuse(
  texts: TemplateStringsArray,
  ...values: (string | number | { readonly field: string })[]
): ProviderFieldsRefusal {
  const parts: RefusalPart[] = [];
  texts.forEach((text, index) => {
    parts.push(text);
    const value = values[index];
    if (value !== undefined) parts.push(typeof value === 'number' ? String(value) : value);
  });
  return new ProviderFieldsRefusal(parts);
}

/**
 * An account at the vendor that one active provider holds alone (an SMPP system id on an SMSC):
 * receipts and replies are assigned by the connection they arrive on.
 */
export interface ExclusiveAccount {
  host: string;
  port: string | undefined;
  systemId: string;
}

export interface ProviderDefinition<Adapter extends WebhookParser = WebhookParser> {
  /** providers.type; a migration allows it in the table's check. */
  readonly type: string;
  /** Non-secret settings as stored in providers.settings. */
  readonly settings: z.ZodType;
  /** Credentials as stored encrypted; null when the type has none. */
  readonly credentials: z.ZodType | null;
  /** The create fields this type takes beyond the common ones (workspace, slug, name, countries...). */
  readonly fields: readonly ProviderField[];
  /**
   * How `herald help` lays out `provider create --type <type>`: field names line by line (the
   * common ones included, `type` for `--type <type>`), then a note under them.
   */
  readonly usage: { readonly lines: readonly (readonly string[])[]; readonly note?: string };
  /** Checks this type's fields of a create input, in the order they are read; throws a refusal. */
  configure(input: ProviderFieldsInput): ProviderConfig;
  /** The account a provider with this configuration holds alone, if the type has one; undefined when unreadable. */
  exclusiveAccount?(config: {
    settings: StoredProvider['settings'];
    credentials: unknown;
  }): ExclusiveAccount | undefined;
  /** The adapter of a stored provider; throws when its configuration is unusable. */
  create(record: StoredProvider, context: AdapterContext): Adapter;
  /** What reads this type's webhooks when the adapter does not (SMPP's come over the bind). */
  webhookParser?(record: StoredProvider, context: AdapterContext): WebhookParser;
  /**
   * Reaches the vendor with the stored settings and credentials and says whether they work
   * (Twilio: fetch the account; SMPP: bind and unbind); absent when the type has nothing to test.
   */
  testConnection?(record: StoredProvider, context: AdapterContext): Promise<ConnectionTest>;
}

/** What a connection test came to: in words for the person who asked, never a credential. */
export type ConnectionTest = { ok: true; detail: string } | { ok: false; reason: string };

/** The definition of `type` in `definitions`, if there is one. */
export function definitionOf<Definition extends ProviderDefinition<WebhookParser>>(
  definitions: readonly Definition[],
  type: string,
): Definition | undefined {
  return definitions.find((definition) => definition.type === type);
}
