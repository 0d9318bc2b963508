#!/usr/bin/env node
// @ts-check
// `npm run deps:audit`: `npm audit` of every locked package, failing on a high or critical
// advisory. Where the registry does not serve npm's advisory endpoint (a mirror or proxy answers
// it 404/405, or it is unreachable), it says so and exits 0 (2 with --strict): the advisories
// must then be checked another way (docs/security.md, "Supply chain": osv-scanner on package-lock.json,
// or npm audit from a machine that reaches registry.npmjs.org). Every tarball `npm ci` installs
// is still checked against the integrity hash in package-lock.json.
import { spawnSync } from 'node:child_process';

const strict = process.argv.includes('--strict');
const audit = spawnSync('npm', ['audit', '--json', '--audit-level=high'], { encoding: 'utf8' });

let report;
try {
  report = JSON.parse(audit.stdout);
} catch {
  report = undefined;
}

const counts = report?.metadata?.vulnerabilities;
if (!counts) {
  const reason = report?.message ?? audit.stderr.trim().split('\n').pop() ?? 'no answer';
  console.error(`deps:audit: the registry gave no advisories (${reason}).`);
  console.error(
    'deps:audit: not audited here; check package-lock.json with osv-scanner, or run npm audit where registry.npmjs.org answers it (docs/security.md, "Supply chain").',
  );
  process.exit(strict ? 2 : 0);
}

const summary = Object.entries(counts)
  .filter(([severity, n]) => severity !== 'total' && n > 0)
  .map(([severity, n]) => `${n} ${severity}`)
  .join(', ');
console.log(`deps:audit: ${counts.total} advisories${summary ? ` (${summary})` : ''}`);
if (counts.high > 0 || counts.critical > 0) {
  // The readable report, for the log.
  spawnSync('npm', ['audit', '--audit-level=high'], { stdio: 'inherit' });
  process.exit(1);
}
