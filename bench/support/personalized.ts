/**
 * The personalised send's 202 latency beside the plain send's (issue 27, item 4): 1,000
 * recipients either way, the personalised one with two variables per recipient (the api renders
 * and checks 1,000 texts and saves each on its message row), timed in alternating rounds on the
 * same stack so drift weighs on both alike. Campaigns drain between rounds, untimed.
 */
import { requestJson } from '../../providers/json-http.js';
import { CAMPAIGN_SIZE, clearInbox, drained, MESSAGE, recipients } from './campaigns.js';
import { cpuByPart } from './cpu.js';
import { measureAlternating, round } from './measure.js';
import type { BenchStack } from './stack.js';

const PERSONALIZED_MESSAGE = 'Hi {{first_name}}, your order {{order}} has shipped.';
const personalization = Object.fromEntries(
  recipients.map((recipient, index) => [
    recipient,
    { first_name: `Customer ${index}`, order: `A-${100_000 + index}` },
  ]),
);

async function post(stack: BenchStack, body: object): Promise<void> {
  const answer = await requestJson(new URL('/api/v1/messages', stack.apiUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    timeoutMs: 60_000,
  });
  if (answer.status !== 202)
    throw new Error(
      `POST /api/v1/messages answered ${answer.status}: ${JSON.stringify(answer.body)}`,
    );
}

export interface PersonalizedLatencyOptions {
  rounds: number;
  perRound: number;
  concurrency: number;
}

export async function personalizedAcceptLatency(
  stack: BenchStack,
  { rounds, perRound, concurrency }: PersonalizedLatencyOptions,
) {
  const settle = async () => {
    await drained(stack);
    await clearInbox(stack);
  };
  const figures = await measureAlternating(
    [
      {
        name: 'plain',
        enter: settle,
        request: () => post(stack, { recipients, message: MESSAGE }),
      },
      {
        name: 'personalized',
        enter: settle,
        request: () => post(stack, { recipients, message: PERSONALIZED_MESSAGE, personalization }),
      },
    ],
    { rounds, perRound, concurrency, cpu: () => cpuByPart(stack.dataDir) },
  );
  await settle();
  const plain = figures.plain;
  const personalized = figures.personalized;
  return {
    recipients: CAMPAIGN_SIZE,
    variables_per_recipient: 2,
    plain,
    personalized,
    p50_personalized_over_plain:
      plain && personalized ? round(personalized.p50_ms / plain.p50_ms, 2) : null,
  };
}
