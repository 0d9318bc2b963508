import type { DependentOtpService } from '../db/message-templates.js';

/** How a refusal names the OTP services that send with a template or a sender. */
export function dependents(services: DependentOtpService[]) {
  const one = services.length === 1;
  const names = services.map((service) => `"${service.name}"`).join(', ');
  return {
    who: `the OTP service${one ? '' : 's'} ${names}`,
    sends: one ? 'sends' : 'send',
    them: one ? 'it' : 'them',
  };
}

export const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
