/**
 * Personalisation from a CSV (issue 27, item 4) in the two front ends of the named-campaign
 * use-case: the console's Create campaign form (a variables CSV, a preview of the first rendered
 * messages, then the send) and `herald campaign create --variables <file.csv>`. Both read the CSV
 * the same way (domain/personalization-csv.ts) and apply the REST send's rules to what it makes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { campaignCreate } from '../../cli/admin/campaigns.js';
import { addUser } from '../../commands/team/users.js';
import { createWorkspace } from '../../commands/team/workspaces.js';
import { parseEnv } from '../../config/env.js';
import { TEST_OPERATOR } from '../support/actors.js';
import { ConsoleBrowser, visibleText } from '../support/console.js';
import { type McpServerUnderTest, openMcpServer } from '../support/mcp.js';
import { type InboxMessage, numbers } from '../support/send.js';

const simulatorUrl = inject('simulatorUrl');
let server: McpServerUnderTest;

beforeAll(async () => {
  server = await openMcpServer();
});
afterAll(() => server.close());

async function workspace() {
  const slug = `p-${randomBytes(5).toString('hex')}`;
  const { id } = await createWorkspace(
    server,
    { name: `Personalised ${slug}`, slug },
    TEST_OPERATOR,
  );
  return { slug, id };
}

async function inboxBodies(recipients: readonly string[]): Promise<Record<string, string>> {
  const wanted = new Set(recipients);
  const response = await fetch(`${simulatorUrl}/v1/inbox`);
  const { messages } = (await response.json()) as { messages: InboxMessage[] };
  return Object.fromEntries(
    messages
      .filter((message) => wanted.has(message.to))
      .map((message) => [message.to, message.body]),
  );
}

async function waitForCompletion(id: number) {
  await expect
    .poll(
      async () =>
        (await server.sql`select status from campaigns where id = ${id}`)[0]?.status as string,
      { timeout: 30_000, interval: 200 },
    )
    .toBe('completed');
}

function messageBodies(id: number) {
  return server.sql<{ recipient: string; body: string | null }[]>`
    select recipient, body from campaign_messages where campaign_id = ${id} order by seq`;
}

describe('Create campaign with a variables CSV', () => {
  async function signedIn() {
    const space = await workspace();
    const email = `dev@${space.slug}.test`;
    await addUser(
      server,
      {
        workspace: space.slug,
        email,
        password: 'correct horse 1',
        role: 'developer',
      },
      TEST_OPERATOR,
    );
    const browser = new ConsoleBrowser(server.app);
    expect((await browser.signIn(email, 'correct horse 1')).status).toBe(303);
    await browser.get(`/console/w/${space.slug}/campaigns/new`);
    return { space, browser };
  }

  it('previews the first three rendered messages, saving nothing, then sends each its own text', async () => {
    const { space, browser } = await signedIn();
    const recipients = numbers(4) as [string, string, string, string];
    // Quoted fields, a comma and a quote inside one, CRLF line ends, a blank line.
    const csv = [
      'number,first_name,city',
      `${recipients[0]},Ada,"Perth, WA"`,
      `${recipients[1]},"Bo ""B""",Hobart`,
      '',
      `${recipients[2]},Cy,Darwin`,
      `${recipients[3]},Di,Cairns`,
    ].join('\r\n');
    const fields = {
      name: 'Personal',
      recipients: '',
      message: 'Hi {{first_name}} in {{city}}',
      purpose: 'transactional',
      variables: csv,
    };
    const preview = await browser.post(`/console/w/${space.slug}/campaigns`, {
      ...fields,
      intent: 'preview',
    });
    expect(preview.status).toBe(200);
    const text = visibleText(preview.body);
    expect(text).toContain(
      `Preview The first 3 of the messages as sent; an opt-out link is each recipient's own. Recipient Message Segments ${recipients[0]} Hi Ada in Perth, WA 1 ${recipients[1]} Hi Bo "B" in Hobart 1 ${recipients[2]} Hi Cy in Darwin 1`,
    );
    const section = /<section[^>]*id="campaign-preview"[\s\S]*?<\/section>/.exec(preview.body);
    expect(section?.[0]).not.toContain(recipients[3]);
    // The form keeps what was typed, for the send.
    expect(preview.body).toContain('Hi {{first_name}} in {{city}}</textarea>');
    const [none] = await server.sql`
      select count(*)::int as count from campaigns where workspace_id = ${space.id}`;
    expect(none?.count).toBe(0);

    const created = await browser.post(`/console/w/${space.slug}/campaigns`, fields);
    expect(created.status).toBe(303);
    const id = Number(/\/batches\/(\d+)\?done=created$/.exec(created.location ?? '')?.[1]);
    expect(await messageBodies(id)).toEqual([
      { recipient: recipients[0], body: 'Hi Ada in Perth, WA' },
      { recipient: recipients[1], body: 'Hi Bo "B" in Hobart' },
      { recipient: recipients[2], body: 'Hi Cy in Darwin' },
      { recipient: recipients[3], body: 'Hi Di in Cairns' },
    ]);
    await waitForCompletion(id);
    expect(await inboxBodies(recipients)).toEqual({
      [recipients[0]]: 'Hi Ada in Perth, WA',
      [recipients[1]]: 'Hi Bo "B" in Hobart',
      [recipients[2]]: 'Hi Cy in Darwin',
      [recipients[3]]: 'Hi Di in Cairns',
    });
  });

  it.each([
    [
      'a column the message needs is missing',
      (a: string) => `number,first_name\n${a},Ada`,
      (a: string) =>
        `Variables: The personalization.${a} field has no value for {{city}}, used in the message.`,
    ],
    [
      'a header that is not a variable name',
      (a: string) => `number,First Name\n${a},Ada`,
      () =>
        'Variables column "First Name" is not a variable name: a lowercase letter, then up to 31 lowercase letters, digits or underscores',
    ],
    [
      'a row shorter than the header',
      (a: string) => `number,first_name,city\n${a},Ada`,
      () => 'Variables row 2 has 2 columns; the header has 3',
    ],
  ])(
    'refuses %s inline under Variables, for preview and send alike',
    async (_name, csv, message) => {
      const { space, browser } = await signedIn();
      const [a] = numbers(1) as [string];
      for (const intent of ['preview', 'send']) {
        const refused = await browser.post(`/console/w/${space.slug}/campaigns`, {
          name: 'Refused',
          recipients: '',
          message: 'Hi {{first_name}} in {{city}}',
          purpose: 'transactional',
          variables: csv(a),
          intent,
        });
        expect(refused.status).toBe(422);
        expect(refused.body).toMatch(
          new RegExp(
            `<label for="campaign-variables">(?:(?!<div class="field)[\\s\\S])*<div class="field-error">${message(
              a,
            )
              .replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
              .replaceAll('"', '&quot;')}</div>`,
          ),
        );
        expect(refused.body.match(/class="field-error"/g)).toHaveLength(1);
      }
      const [none] = await server.sql`
      select count(*)::int as count from campaigns where workspace_id = ${space.id}`;
      expect(none?.count).toBe(0);
    },
  );
});

describe('herald campaign create --variables', () => {
  const admin = () => ({
    ...server.admin,
    env: parseEnv({ LOG_LEVEL: 'silent', TEMPORAL_ADDRESS: inject('temporalAddress') }),
  });

  it('sends each CSV row its own text, the recipients taken from the file', async () => {
    const space = await workspace();
    const recipients = numbers(2) as [string, string];
    const file = join(await mkdtemp(join(tmpdir(), 'herald-vars-')), 'vars.csv');
    await writeFile(file, `number,code\n${recipients[0]},A1\n${recipients[1]},B2\n`);
    const created = await campaignCreate(admin(), {
      workspace: space.slug,
      name: 'Codes',
      body: 'Your code is {{code}}',
      variables: file,
    });
    const { id } = created.json as { id: number };
    expect(created.json).toEqual({ id, status: 'queued' });
    await waitForCompletion(id);
    expect(await inboxBodies(recipients)).toEqual({
      [recipients[0]]: 'Your code is A1',
      [recipients[1]]: 'Your code is B2',
    });
  });

  it('refuses a missing variable and an unreadable file with their usage errors', async () => {
    const space = await workspace();
    const [a, b] = numbers(2) as [string, string];
    const file = join(await mkdtemp(join(tmpdir(), 'herald-vars-')), 'vars.csv');
    await writeFile(file, `number,code\n${a},A1\n`);
    const base = { workspace: space.slug, name: 'Codes', body: 'Your code is {{code}}' };
    await expect(
      campaignCreate(admin(), { ...base, recipients: `${a},${b}`, variables: file }),
    ).rejects.toThrow(
      `--variables: The personalization.${b} field has no value for {{code}}, used in the message.`,
    );
    await expect(
      campaignCreate(admin(), { ...base, variables: `${file}.missing` }),
    ).rejects.toThrow(`--variables: cannot read ${file}.missing (ENOENT`);
    const [none] = await server.sql`
      select count(*)::int as count from campaigns where workspace_id = ${space.id}`;
    expect(none?.count).toBe(0);
  });
});
