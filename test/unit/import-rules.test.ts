import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/*
 * docs/contracts.md's dependency rule, checked over every import in the tree. A small walker over the
 * TypeScript compiler's own syntax tree rather than dependency-cruiser: typescript is already a
 * dependency (no new package for the supply-chain check), it tells `import type` from a value
 * import exactly as the compiler does, and the whole rule fits in this one file.
 */

type Folder =
  | 'server'
  | 'cli'
  | 'api'
  | 'console'
  | 'mcp'
  | 'commands'
  | 'temporal'
  | 'workflows'
  | 'activities'
  | 'providers'
  | 'db'
  | 'domain'
  | 'security'
  | 'telemetry'
  | 'config';

interface Rule {
  /** Folders this one may import from (values and types). */
  imports: Folder[];
  /** Folders this one may import from with `import type` only. */
  types?: Folder[];
}

/**
 * Who may import whom: one row per top-level folder, no per-file exceptions. Dependencies point
 * one way; a folder may skip a layer downwards (a front end reading db/ directly) but never point
 * up or sideways. The composition roots, the only modules that see every part, live in server/:
 * the HTTP app (api, console and mcp side by side), the worker process (activities with their
 * providers and database, the workflow bundle), and what each role starts. cli/ is the `herald`
 * command: its roles call server/, its admin commands call commands/.
 */
const FRONT_END_IMPORTS: Folder[] = [
  'commands',
  'temporal',
  'workflows',
  'db',
  'domain',
  'security',
  'telemetry',
  'config',
];

const RULES: Record<Folder, Rule> = {
  server: {
    imports: [
      'api',
      'console',
      'mcp',
      'commands',
      'temporal',
      'workflows',
      'activities',
      'providers',
      'db',
      'domain',
      'security',
      'telemetry',
      'config',
    ],
  },
  cli: {
    imports: [
      'server',
      'commands',
      'temporal',
      'workflows',
      'db',
      'domain',
      'security',
      'telemetry',
      'config',
    ],
  },
  // The front ends never import each other.
  api: { imports: [...FRONT_END_IMPORTS] },
  console: { imports: [...FRONT_END_IMPORTS] },
  mcp: { imports: [...FRONT_END_IMPORTS] },
  // workflows/ by value means its definitions module (ids, task queues, search attributes): any
  // module of workflow code is named by type only outside workflows/ (WORKFLOW_SDK below).
  commands: {
    imports: ['temporal', 'workflows', 'db', 'domain', 'security', 'telemetry', 'config'],
  },
  // Temporal's client side: starts, search attributes, schedules.
  temporal: { imports: ['workflows', 'domain', 'telemetry', 'config'] },
  workflows: { imports: ['domain'], types: ['activities'] },
  activities: { imports: ['db', 'providers', 'domain', 'security', 'telemetry', 'config'] },
  // Vendor I/O only: records and sinks are handed to providers, they never reach the database.
  providers: { imports: ['domain', 'security', 'telemetry', 'config'] },
  db: { imports: ['domain'] },
  domain: { imports: [] },
  security: { imports: ['domain'] },
  // Metrics, traces and logs: instruments every layer above db/ and domain/ may record to.
  telemetry: { imports: ['domain', 'config'] },
  config: { imports: ['domain'] },
};

/** Not application code: checked by their own tests, free to import anything. */
const OUTSIDE_THE_RULE = new Set(['test', 'bench', 'scripts', 'bin', 'deploy', 'dist']);
/** The one folder that reads `process.env`. */
const ENVIRONMENT_READER: Folder = 'config';
/** The one folder that writes SQL. */
const SQL_WRITER: Folder = 'db';
/**
 * A module importing this as a value is workflow code: outside workflows/ it is named by
 * `import type` only (the worker bundles it by path), so the definitions module stays plain data
 * that the api, commands and the worker load without pulling workflow code in.
 */
const WORKFLOW_SDK = '@temporalio/workflow';

interface Import {
  specifier: string;
  typeOnly: boolean;
}

interface SourceFacts {
  imports: Import[];
  readsEnvironment: boolean;
  writesSql: boolean;
}

/** What one file imports, whether it reads process.env, and whether it writes SQL. */
function factsOf(fileName: string, text: string): SourceFacts {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const facts: SourceFacts = { imports: [], readsEnvironment: false, writesSql: false };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      // Under verbatimModuleSyntax only `import type` is erased; `import { type X }` still loads.
      const typeOnly = node.importClause?.isTypeOnly ?? false;
      facts.imports.push({ specifier: node.moduleSpecifier.text, typeOnly });
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      facts.imports.push({ specifier: node.moduleSpecifier.text, typeOnly: node.isTypeOnly });
    } else if (
      ts.isImportEqualsDeclaration(node) &&
      ts.isExternalModuleReference(node.moduleReference) &&
      ts.isStringLiteral(node.moduleReference.expression)
    ) {
      facts.imports.push({
        specifier: node.moduleReference.expression.text,
        typeOnly: node.isTypeOnly,
      });
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      facts.imports.push({ specifier: node.arguments[0].text, typeOnly: false });
    } else if (
      ts.isImportTypeNode(node) &&
      ts.isLiteralTypeNode(node.argument) &&
      ts.isStringLiteral(node.argument.literal)
    ) {
      facts.imports.push({ specifier: node.argument.literal.text, typeOnly: true });
    }
    if (isEnvironmentRead(node)) facts.readsEnvironment = true;
    if (isSqlText(node)) facts.writesSql = true;
    ts.forEachChild(node, visit);
  };
  visit(source);
  return facts;
}

/** `process.env`, `process['env']`, or `env` imported from node:process. */
function isEnvironmentRead(node: ts.Node): boolean {
  const isProcess = (expression: ts.Expression) =>
    ts.isIdentifier(expression) && expression.text === 'process';
  if (ts.isPropertyAccessExpression(node)) {
    return isProcess(node.expression) && node.name.text === 'env';
  }
  if (ts.isElementAccessExpression(node)) {
    const key = node.argumentExpression;
    return isProcess(node.expression) && ts.isStringLiteral(key) && key.text === 'env';
  }
  if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
    const from = node.moduleSpecifier.text;
    const bindings = node.importClause?.namedBindings;
    return (
      (from === 'process' || from === 'node:process') &&
      bindings !== undefined &&
      ts.isNamedImports(bindings) &&
      bindings.elements.some((element) => (element.propertyName ?? element.name).text === 'env')
    );
  }
  return false;
}

/** A postgres.js query: sql`...` / tx`...` / deps.sql`...`, or sql.unsafe(...). */
function isSqlText(node: ts.Node): boolean {
  const namesSql = (expression: ts.Expression) => {
    const name = ts.isIdentifier(expression)
      ? expression.text
      : ts.isPropertyAccessExpression(expression)
        ? expression.name.text
        : undefined;
    return name === 'sql' || name === 'tx';
  };
  if (ts.isTaggedTemplateExpression(node)) return namesSql(node.tag);
  return (
    ts.isCallExpression(node) &&
    ts.isPropertyAccessExpression(node.expression) &&
    node.expression.name.text === 'unsafe' &&
    namesSql(node.expression.expression)
  );
}

interface SourceFile {
  /** Path from the repository root, with forward slashes. */
  path: string;
  facts: SourceFacts;
}

/** The top-level folder of a repository path; undefined for files at the root. */
const folderOf = (path: string) => (path.includes('/') ? path.split('/')[0] : undefined);

/** A relative specifier's target, as a repository path to the .ts source. */
function resolveRelative(from: string, specifier: string): string {
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  return target.replace(/\.js$/, '.ts');
}

/** Every broken rule among the given files, one line each: `file -> target: reason`. */
function violationsOf(files: SourceFile[]): string[] {
  const byPath = new Map(files.map((file) => [file.path, file]));
  const isWorkflowCode = (path: string) =>
    byPath
      .get(path)
      ?.facts.imports.some((entry) => entry.specifier === WORKFLOW_SDK && !entry.typeOnly) ?? false;
  const violations: string[] = [];
  for (const file of files) {
    const folder = folderOf(file.path);
    if (folder === undefined || OUTSIDE_THE_RULE.has(folder)) continue;
    const rule = RULES[folder as Folder] as Rule | undefined;
    if (!rule) {
      violations.push(`${file.path}: folder ${folder}/ has no row in the import rules`);
      continue;
    }
    if (file.facts.readsEnvironment && folder !== ENVIRONMENT_READER) {
      violations.push(`${file.path}: reads process.env (only ${ENVIRONMENT_READER}/ does)`);
    }
    if (file.facts.writesSql && folder !== SQL_WRITER) {
      violations.push(`${file.path}: writes SQL (only ${SQL_WRITER}/ does)`);
    }
    for (const entry of file.facts.imports) {
      if (entry.specifier === WORKFLOW_SDK && !entry.typeOnly && folder !== 'workflows') {
        violations.push(`${file.path} -> ${WORKFLOW_SDK}: workflow SDK outside workflows/`);
      }
      if (!entry.specifier.startsWith('.')) continue;
      const target = resolveRelative(file.path, entry.specifier);
      const targetFolder = folderOf(target);
      if (targetFolder === folder) continue;
      const kind = entry.typeOnly ? 'import type' : 'import';
      const allowed =
        targetFolder !== undefined &&
        (rule.imports.includes(targetFolder as Folder) ||
          (entry.typeOnly && (rule.types ?? []).includes(targetFolder as Folder)));
      if (!allowed) {
        violations.push(`${file.path} -> ${target}: ${folder}/ may not ${kind} ${targetFolder}/`);
      } else if (!entry.typeOnly && folder !== 'workflows' && isWorkflowCode(target)) {
        violations.push(`${file.path} -> ${target}: workflow code, named here by type only`);
      }
    }
  }
  return violations;
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', '.data', '.tools']);

function sourceFilesUnder(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) {
      const skipped =
        SKIPPED_DIRECTORIES.has(entry.name) ||
        (directory === root && OUTSIDE_THE_RULE.has(entry.name));
      return skipped ? [] : sourceFilesUnder(path);
    }
    return /\.(ts|mts|cts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

const repositoryFiles = (): SourceFile[] =>
  sourceFilesUnder(root).map((absolute) => {
    const path = relative(root, absolute).split('\\').join('/');
    return { path, facts: factsOf(path, readFileSync(absolute, 'utf8')) };
  });

/** A file for the checker's own cases, as if it sat at `path` in the tree. */
const file = (path: string, text: string): SourceFile => ({ path, facts: factsOf(path, text) });

describe('import rules (docs/contracts.md: dependencies point one way)', () => {
  it('hold for every source file in the repository', () => {
    expect(violationsOf(repositoryFiles())).toEqual([]);
  });
});

describe('the import-rule checker', () => {
  it('reports a front end importing another front end', () => {
    const files = [
      file('api/app.ts', "import { mcpRoutes } from '../mcp/routes.js';"),
      file('mcp/routes.ts', 'export const mcpRoutes = 1;'),
    ];
    expect(violationsOf(files)).toEqual(['api/app.ts -> mcp/routes.ts: api/ may not import mcp/']);
  });

  it('reports activities importing workflows, even by type', () => {
    const files = [file('activities/otp.ts', "import type { X } from '../workflows/otp.js';")];
    expect(violationsOf(files)).toEqual([
      'activities/otp.ts -> workflows/otp.ts: activities/ may not import type workflows/',
    ]);
  });

  it('lets workflows name activities by type, and only by type', () => {
    const files = [
      file('workflows/a.ts', "import type { Activities } from '../activities/index.js';"),
      file('workflows/b.ts', "import { type Activities } from '../activities/index.js';"),
    ];
    expect(violationsOf(files)).toEqual([
      'workflows/b.ts -> activities/index.ts: workflows/ may not import activities/',
    ]);
  });

  it('reports providers reaching the database, by value or by type', () => {
    const files = [
      file('providers/registry.ts', "import { findProvider } from '../db/providers.js';"),
      file('providers/sessions.ts', "import type { Sql } from '../db/client.js';"),
      file('providers/types.ts', "export type { E164 } from '../domain/phone.js';"),
    ];
    expect(violationsOf(files)).toEqual([
      'providers/registry.ts -> db/providers.ts: providers/ may not import db/',
      'providers/sessions.ts -> db/client.ts: providers/ may not import type db/',
    ]);
  });

  it('reports commands reaching providers, and dynamic imports count', () => {
    const files = [
      file('commands/routing.ts', "const registry = await import('../providers/registry.js');"),
    ];
    expect(violationsOf(files)).toEqual([
      'commands/routing.ts -> providers/registry.ts: commands/ may not import providers/',
    ]);
  });

  it('lets the server module compose the front ends side by side', () => {
    const files = [
      file('server/app.ts', "import { a } from '../api/app.js';\nimport { m } from '../mcp/r.js';"),
      file('cli/main.ts', "import { serve } from '../server/roles.js';"),
      file('api/app.ts', "import { serve } from '../server/roles.js';"),
    ];
    expect(violationsOf(files)).toEqual([
      'api/app.ts -> server/roles.ts: api/ may not import server/',
    ]);
  });

  it('reports a value import of workflow code outside workflows/', () => {
    const files = [
      file('workflows/otp.ts', "import { defineUpdate } from '@temporalio/workflow';"),
      file('workflows/definitions.ts', 'export const TASK_QUEUE = "herald";'),
      file(
        'temporal/starts.ts',
        [
          "import { submissionUpdate } from '../workflows/otp.js';",
          "import type { otpWorkflow } from '../workflows/otp.js';",
          "import { TASK_QUEUE } from '../workflows/definitions.js';",
        ].join('\n'),
      ),
      file('temporal/client.ts', "import { sleep } from '@temporalio/workflow';"),
    ];
    expect(violationsOf(files)).toEqual([
      'temporal/starts.ts -> workflows/otp.ts: workflow code, named here by type only',
      'temporal/client.ts -> @temporalio/workflow: workflow SDK outside workflows/',
    ]);
  });

  it('reports process.env read outside config/', () => {
    const files = [
      file('config/env.ts', 'export const env = process.env;'),
      file('cli/a.ts', 'spawn("x", { env: { ...process.env, LC_ALL: "C" } });'),
      file('cli/b.ts', "const port = process['env'].PORT;"),
      file('cli/c.ts', "import { env } from 'node:process';"),
      file('cli/d.ts', '// process.env is read by config/ only'),
    ];
    expect(violationsOf(files)).toEqual([
      'cli/a.ts: reads process.env (only config/ does)',
      'cli/b.ts: reads process.env (only config/ does)',
      'cli/c.ts: reads process.env (only config/ does)',
    ]);
  });

  it('reports SQL written outside db/', () => {
    const files = [
      file('db/slots.ts', 'export const take = (sql) => sql`select 1`;'),
      file('activities/throughput.ts', 'await deps.sql`select 1`;'),
      file('commands/a.ts', 'await tx.unsafe("create database x");'),
      file('commands/b.ts', 'await deps.sql.begin(async (tx) => insertRow(tx));'),
    ];
    expect(violationsOf(files)).toEqual([
      'activities/throughput.ts: writes SQL (only db/ does)',
      'commands/a.ts: writes SQL (only db/ does)',
    ]);
  });

  it('reports a folder the rules do not know', () => {
    const files = [file('jobs/nightly.ts', "import { x } from '../db/x.js';")];
    expect(violationsOf(files)).toEqual([
      'jobs/nightly.ts: folder jobs/ has no row in the import rules',
    ]);
  });
});
