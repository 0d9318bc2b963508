import { randomBytes } from 'node:crypto';
import {
  type Answer,
  call,
  isFinalSend,
  recipients,
  sendUntilFinal,
  spreadRecipients,
  type Tenant,
} from './api.js';
import { sleep, tally } from './timing.js';

/**
 * Requests a client keeps making while a part of the stack is down: every `intervalMs` each
 * probe is fired without waiting for the previous one (a hang must not slow the probing down).
 * Sends carry Idempotency-Keys; afterwards `settle` retries every send that got no final answer
 * with its key, as a client following the contract would, so what they created is counted too.
 */

export interface ProbeRecord {
  probe: string;
  startedAt: number;
  status: Answer['status'];
  ms: number;
}

export interface WindowSummary {
  requests: number;
  by_status: Record<string, number>;
  /** Requests that got no answer within the probe's 30 s client timeout. */
  unanswered: number;
  max_ms: number;
  over_5s: number;
  status_500: number;
  by_probe: Record<string, { requests: number; by_status: Record<string, number>; max_ms: number }>;
}

interface PendingSend {
  key: string;
  request: { recipients: string[]; message: string };
  answer: Answer;
}

interface PendingOtp {
  key: string;
  request: { recipient: string; purpose: string };
  answer: Answer;
}

export class Prober {
  readonly records: ProbeRecord[] = [];
  private readonly sends: PendingSend[] = [];
  private readonly otps: PendingOtp[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly finalIds = new Set<number>();
  private running = false;
  private loop: Promise<void> | undefined;
  private counter = 0;
  private readonly tag = randomBytes(4).toString('hex');

  constructor(
    private readonly apiUrl: string,
    private readonly tenant: Tenant,
    private readonly options: {
      /** A campaign to look up. */
      campaignId: number;
      /** An OTP request to verify with a wrong code (the answer is 422 when all is well). */
      otp: { requestId: string; recipient: string };
      /** Probe the MCP endpoints too (MCP_ENABLED=true). */
      mcp: boolean;
      /** Recipient prefix for probe sends and OTPs (a distinct number each). */
      prefix: string;
      intervalMs?: number;
    },
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        this.tick();
        await sleep(this.options.intervalMs ?? 500);
      }
    })();
  }

  /** Stops firing and waits for the requests in flight. */
  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await Promise.all(this.inFlight);
  }

  /** The campaigns the probe sends' keys point to (after `settle`, every one of them). */
  campaignIds(): number[] {
    return [...this.finalIds];
  }

  /** Probes started in [from, to] (Date.now() values). */
  summary(from: number, to: number): WindowSummary {
    const inWindow = this.records.filter((r) => r.startedAt >= from && r.startedAt <= to);
    const byProbe: WindowSummary['by_probe'] = {};
    for (const name of new Set(inWindow.map((r) => r.probe))) {
      const mine = inWindow.filter((r) => r.probe === name);
      byProbe[name] = {
        requests: mine.length,
        by_status: tally(mine.map((r) => r.status)),
        max_ms: Math.round(Math.max(...mine.map((r) => r.ms))),
      };
    }
    return {
      requests: inWindow.length,
      by_status: tally(inWindow.map((r) => r.status)),
      unanswered: inWindow.filter((r) => r.status === 'timeout' || r.status === 'error').length,
      max_ms: Math.round(Math.max(0, ...inWindow.map((r) => r.ms))),
      over_5s: inWindow.filter((r) => r.ms > 5_000 || typeof r.status !== 'number').length,
      status_500: inWindow.filter((r) => r.status === 500).length,
      by_probe: byProbe,
    };
  }

  /**
   * Retries every send and OTP without a final answer under its key until it has one.
   * Returns how many needed retrying, and how many never got a final answer.
   */
  async settle(apiUrls: string[], deadlineMs = 180_000) {
    const sends = this.sends.filter((send) => !isFinalSend(send.answer));
    const otps = this.otps.filter((otp) => !isFinalOtp(otp.answer));
    let unsettled = 0;
    await Promise.all([
      ...sends.map((send) =>
        sendUntilFinal(apiUrls, this.tenant, send.request, send.key, { deadlineMs }).then(
          ({ id }) => {
            this.finalIds.add(id);
          },
          () => {
            unsettled++;
          },
        ),
      ),
      ...otps.map(async (otp) => {
        const deadline = Date.now() + deadlineMs;
        for (let attempt = 0; Date.now() < deadline; attempt++) {
          const answer = await call(
            apiUrls[attempt % apiUrls.length] as string,
            'POST',
            '/api/v1/otp/send',
            {
              token: this.tenant.token,
              key: otp.key,
              body: otp.request,
            },
          );
          if (isFinalOtp(answer)) return;
          await sleep(1000);
        }
        unsettled++;
      }),
    ]);
    return { sends_retried: sends.length, otps_retried: otps.length, unsettled };
  }

  private tick(): void {
    const n = this.counter++;
    const token = this.tenant.token;
    const [sendTo] = recipients(this.options.prefix, 1, 2 * n);
    const [otpTo] = spreadRecipients(this.options.prefix, 1, 2 * n + 1);
    const fire = (probe: string, request: () => Promise<Answer>) => {
      const startedAt = Date.now();
      const running = request().then((answer) => {
        this.records.push({ probe, startedAt, status: answer.status, ms: answer.ms });
      });
      this.inFlight.add(running);
      running.finally(() => this.inFlight.delete(running));
    };

    const sendKey = `probe-${this.tag}-send-${n}`;
    const send = { recipients: [sendTo as string], message: `Probe ${sendKey}` };
    fire('send', async () => {
      const answer = await call(this.apiUrl, 'POST', '/api/v1/messages', {
        token,
        key: sendKey,
        body: { ...send, reference: sendKey },
      });
      this.sends.push({ key: sendKey, request: send, answer });
      if (isFinalSend(answer)) this.finalIds.add(answer.body.data.message.id);
      return answer;
    });
    fire('lookup', () =>
      call(this.apiUrl, 'GET', `/api/v1/messages/${this.options.campaignId}`, { token }),
    );
    const otpKey = `probe-${this.tag}-otp-${n}`;
    const otp = { recipient: otpTo as string, purpose: 'login' };
    fire('otp-send', async () => {
      const answer = await call(this.apiUrl, 'POST', '/api/v1/otp/send', {
        token,
        key: otpKey,
        body: otp,
      });
      this.otps.push({ key: otpKey, request: otp, answer });
      return answer;
    });
    fire('otp-verify', () =>
      call(this.apiUrl, 'POST', '/api/v1/otp/verify', {
        token,
        body: {
          recipient: this.options.otp.recipient,
          request_id: this.options.otp.requestId,
          code: '000000',
        },
      }),
    );
    fire('health', () => call(this.apiUrl, 'GET', '/health'));
    if (this.options.mcp) {
      fire('oauth-metadata', () =>
        call(this.apiUrl, 'GET', '/.well-known/oauth-authorization-server'),
      );
      // An unknown token is looked up in Postgres: 401 when all is well.
      fire('mcp', () =>
        call(this.apiUrl, 'POST', '/mcp', {
          token: 'not-a-real-token',
          body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        }),
      );
    }
  }
}

/** An OTP send answer that ends a client's retries: the provider's answer is known. */
export function isFinalOtp(answer: Answer): boolean {
  const status = answer.body?.data?.status;
  return answer.status === 202 && (status === 'accepted' || status === 'failed');
}
