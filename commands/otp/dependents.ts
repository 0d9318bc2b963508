import type { DependentOtpService } from '../../db/message-templates.js';

/** A refusal names this many services and counts the rest, so it stays readable with hundreds. */
const NAMED_AT_MOST = 3;

/** How a refusal names the OTP services that send with a template or a sender. */
export function dependents(services: DependentOtpService[]) {
  const one = services.length === 1;
  const named = services.slice(0, NAMED_AT_MOST).map((service) => `"${service.name}"`);
  const rest = services.length - named.length;
  const names = named.join(', ') + (rest > 0 ? ` and ${rest} more` : '');
  return {
    who: `the OTP service${one ? '' : 's'} ${names}`,
    sends: one ? 'sends' : 'send',
    them: one ? 'it' : 'them',
  };
}

export const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
