import { findSecretsInText, type LogSecret } from '../../support/log-secrets.js';
import { type Check, check } from './scenario.js';

/**
 * Issue 24 item 4 in the chaos suite: a run's logs hold no secret. Every secret a run makes or
 * sees is remembered here (API keys and invitation tokens the CLI prints, passwords it is given,
 * OTP codes and opt-out links read at the inbox, the stack's HERALD_SECRET and database
 * password), and each stack's logs are searched for them when it closes, before its data goes.
 */

export type SecretKind =
  | 'api key'
  | 'invitation token'
  | 'password'
  | 'otp code'
  | 'opt-out token'
  | 'session cookie'
  | 'HERALD_SECRET'
  | 'database password';

interface Secret {
  kind: SecretKind;
  /** What gives it away in a log line: the value itself, or (OTP codes) its settings. */
  needles: (string | RegExp)[];
}

const remembered = new Map<string, Secret>();

/*
 * Issue 26 item 3: nor any phone number or message body the run sent. Numbers are many (a
 * campaign has 1,000), so a log's digit runs are looked up among them rather than each searched
 * for; bodies are searched as they are, if long enough not to occur by chance.
 */
const sentNumbers = new Set<string>();
const sentBodies = new Set<string>();
const MIN_BODY_LENGTH = 16;

/** What a REST request of the run sends (api.ts `call`): recipients, and the message text. */
export function rememberSent(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const { recipients, recipient, message } = body as Record<string, unknown>;
  for (const number of [recipients, recipient].flat())
    if (typeof number === 'string') sentNumbers.add(number.replace(/^\+/, ''));
  if (typeof message === 'string' && message.length >= MIN_BODY_LENGTH) sentBodies.add(message);
}

/** The provider stand-in's own log holds the messages it received, as a real SMSC's would. */
const isProviderLog = (log: LogText) => log.name.startsWith('simulator');

export function rememberSecret(
  kind: SecretKind,
  value: string,
  needles: (string | RegExp)[] = [value],
) {
  if (value.length > 0 && !remembered.has(value)) remembered.set(value, { kind, needles });
}

/**
 * OTP codes and opt-out tokens in the SMS bodies a run read at the inbox. A code is a few digits,
 * which megabytes of log hold by chance (a port, a pid, the digits of a request id): it counts only
 * beside the words that carry it, as in its SMS (`code is 123456`) or a field (`code: "123456"`).
 */
export function rememberInboxSecrets(bodies: string[]) {
  for (const body of bodies) {
    for (const match of body.matchAll(/\/o\/([A-Za-z0-9_-]{8,})/g))
      rememberSecret('opt-out token', match[1] as string);
    if (!/code/i.test(body)) continue;
    for (const match of body.matchAll(/(?<!\d)\d{4,8}(?!\d)/g)) {
      const code = match[0];
      const at = match.index ?? 0;
      // Words beside the code: before it, or after it when it opens the SMS.
      const before = body.slice(Math.max(0, at - 12), at);
      const beside =
        before.length >= 6
          ? `${before}${code}`
          : `${code}${body.slice(at + code.length, at + code.length + 12)}`;
      rememberSecret('otp code', `${code} ${body}`, [
        beside,
        new RegExp(`code["'\\s]*[:=]\\s*["']?${code}(?!\\d)`, 'i'),
      ]);
    }
  }
}

export interface LogText {
  name: string;
  text: string;
}

export interface LogAudit {
  /** Bytes searched, per log. */
  logs: Record<string, number>;
  secrets: Record<string, number>;
  /** Log lines holding a secret, by kind, and a few of them with the secret masked. */
  leaks: Record<string, number>;
  examples: string[];
}

const audits: LogAudit[] = [];

/**
 * Searches the logs for every secret remembered so far, kept for `takeLogAudits`: the values in
 * every form a line may hold them in (test/support/log-secrets.ts), and OTP codes as fields.
 */
export function auditLogs(logs: LogText[]): LogAudit {
  const audit: LogAudit = { logs: {}, secrets: {}, leaks: {}, examples: [] };
  const literals: LogSecret[] = [];
  const fields: { kind: SecretKind; pattern: RegExp }[] = [];
  for (const { kind, needles } of remembered.values()) {
    audit.secrets[kind] = (audit.secrets[kind] ?? 0) + 1;
    for (const needle of needles) {
      if (typeof needle === 'string') literals.push({ kind, value: needle });
      else fields.push({ kind, pattern: new RegExp(needle.source, 'gi') });
    }
  }
  const found = (kind: string, excerpt: string) => {
    audit.leaks[kind] = (audit.leaks[kind] ?? 0) + 1;
    if (audit.examples.length < 5) audit.examples.push(excerpt);
  };
  audit.secrets['phone number'] = sentNumbers.size;
  audit.secrets['message body'] = sentBodies.size;
  for (const log of logs) {
    audit.logs[log.name] = Buffer.byteLength(log.text);
    if (!isProviderLog(log)) findSentInLog(log, found);
    for (const leak of findSecretsInText(log.text, literals, log.name))
      found(leak.kind, `${leak.file}:${leak.line}: ${leak.excerpt}`);
    for (const { kind, pattern } of fields) {
      if (!log.text.match(pattern)) continue;
      log.text.split('\n').forEach((line, index) => {
        if (line.match(pattern))
          found(
            kind,
            `${log.name}:${index + 1}: ${line.replace(pattern, `<${kind}>`).slice(0, 300)}`,
          );
      });
    }
  }
  audits.push(audit);
  return audit;
}

/** Reports each line of `log` that holds a number or a body the run sent. */
function findSentInLog(log: LogText, found: (kind: string, excerpt: string) => void): void {
  const mask = (line: string) => line.replace(/\+?\d{8,15}/g, '<number>').slice(0, 300);
  log.text.split('\n').forEach((line, index) => {
    const where = `${log.name}:${index + 1}`;
    for (const digits of line.match(/(?<!\d)\d{8,15}(?!\d)/g) ?? [])
      if (sentNumbers.has(digits)) found('phone number', `${where}: ${mask(line)}`);
    for (const body of sentBodies)
      if (line.includes(body))
        found('message body', `${where}: ${mask(line.replace(body, '<body>'))}`);
  });
}

/** The audits of the stacks closed since the last call; the remembered secrets are forgotten. */
export function takeLogAudits(): LogAudit[] {
  const taken = audits.splice(0);
  remembered.clear();
  sentNumbers.clear();
  sentBodies.clear();
  return taken;
}

/** The named check a run ends with: no secret in any log of its stacks. */
export function logSecretsCheck(taken: LogAudit[]): Check {
  const leaks: Record<string, number> = {};
  const secrets: Record<string, number> = {};
  for (const audit of taken) {
    for (const [kind, n] of Object.entries(audit.leaks)) leaks[kind] = (leaks[kind] ?? 0) + n;
    for (const [kind, n] of Object.entries(audit.secrets)) secrets[kind] = (secrets[kind] ?? 0) + n;
  }
  const examples = taken.flatMap((audit) => audit.examples).slice(0, 5);
  const bytes = taken.reduce(
    (sum, audit) => sum + Object.values(audit.logs).reduce((n, b) => n + b, 0),
    0,
  );
  return check(
    'secrets in logs',
    { leaks, secrets, log_bytes: bytes, examples },
    taken.length > 0 && Object.keys(leaks).length === 0,
    'no API key, token, password, OTP code, phone number or message body sent in any log of the stack',
  );
}
