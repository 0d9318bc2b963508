import { createHmac, type KeyObject, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { purposeKey, purposeKeys } from '../../security/keys.js';

/**
 * An authorization request between /authorize and sign-in travels in the sign-in form, signed
 * and with its expiry, instead of being stored: an unauthenticated request stores nothing
 * (as Doorkeeper and django-oauth-toolkit carry the request through their forms). Sign-in opens
 * it and stores it bound to the user who signed in.
 */
const authorizationRequest = z.object({
  clientId: z.string(),
  redirectUri: z.string(),
  state: z.string().nullable(),
  codeChallenge: z.string(),
  scope: z.string(),
  resource: z.string(),
  /** Epoch seconds. */
  expiresAt: z.number(),
});

export type AuthorizationRequest = Omit<z.infer<typeof authorizationRequest>, 'expiresAt'>;

/** Far above any request the field caps allow (authorize.ts); longer is not ours. */
const MAX_SEALED_LENGTH = 16_384;

function mac(key: KeyObject, payload: string): Buffer {
  return createHmac('sha256', key).update(payload).digest();
}

export function sealRequest(
  secret: string,
  request: AuthorizationRequest,
  lifetimeSeconds: number,
  now = Date.now(),
): string {
  const expiresAt = Math.floor(now / 1000) + lifetimeSeconds;
  const payload = Buffer.from(JSON.stringify({ ...request, expiresAt })).toString('base64url');
  const signature = mac(purposeKey(secret, 'oauth-request-signing'), payload);
  return `${payload}.${signature.toString('base64url')}`;
}

/** The request, or undefined when the value is not one this server sealed or it expired. */
export function openRequest(
  secret: string,
  sealed: string,
  now = Date.now(),
): AuthorizationRequest | undefined {
  if (sealed.length > MAX_SEALED_LENGTH) return undefined;
  const [payload, signature, ...rest] = sealed.split('.');
  if (!payload || !signature || rest.length > 0) return undefined;
  const presented = Buffer.from(signature, 'base64url');
  // Sealed by any key of the ring: a sign-in form opened just before a rotation still submits.
  const sealedHere = purposeKeys(secret, 'oauth-request-signing').some((key) => {
    const expected = mac(key, payload);
    return presented.length === expected.length && timingSafeEqual(presented, expected);
  });
  if (!sealedHere) return undefined;
  let parsed: ReturnType<typeof authorizationRequest.safeParse>;
  try {
    parsed = authorizationRequest.safeParse(
      JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')),
    );
  } catch {
    return undefined;
  }
  if (!parsed.success || parsed.data.expiresAt * 1000 <= now) return undefined;
  const { expiresAt: _, ...request } = parsed.data;
  return request;
}
