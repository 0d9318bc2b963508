#!/usr/bin/env node
// @ts-check
// `npm run deps:lock` (npm install, then this). A registry that lacks a version of another
// platform's optional binary (biome, swc, esbuild…) makes `npm install` leave it out of
// package-lock.json, and `npm ci` then refuses the lock. This adds such entries back, marked
// optional with the os/cpu their names declare, with the integrity the registry publishes for
// them; then it checks that every entry has an integrity hash, so that `npm ci` verifies every
// tarball it installs, and exits 1 naming any that does not (pin a version the registry serves
// for every platform: docs/security.md, "Supply chain").
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

const LOCK = new URL('../package-lock.json', import.meta.url);
const lock = JSON.parse(readFileSync(LOCK, 'utf8'));
const packages = lock.packages;

const OS = [
  'darwin',
  'linux',
  'win32',
  'android',
  'freebsd',
  'openbsd',
  'netbsd',
  'sunos',
  'aix',
  'openharmony',
];
const CPU = [
  'arm64',
  'x64',
  'ia32',
  'arm',
  'ppc64',
  's390x',
  'riscv64',
  'loong64',
  'mips64el',
  'wasm32',
];

/** @param {string} name */
function platformOf(name) {
  const parts = (name.split('/').pop() ?? '').split('-');
  const os =
    parts.find((part) => OS.includes(part)) ??
    (parts.includes('win') ? 'win32' : parts.includes('wasm32') ? undefined : undefined);
  const cpu = parts.find((part) => CPU.includes(part));
  const libc = parts.includes('musl')
    ? 'musl'
    : parts.includes('gnu') && os === 'linux'
      ? 'glibc'
      : undefined;
  return { os, cpu, libc };
}

let added = 0;
for (const [path, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const base = path === '' ? '' : `${path}/`;
    if (packages[`${base}node_modules/${name}`] || packages[`node_modules/${name}`]) continue;
    const { os, cpu, libc } = platformOf(name);
    if (!os && !cpu) continue;
    packages[`node_modules/${name}`] = {
      version: version.replace(/^[\^~=]/, ''),
      optional: true,
      ...(os ? { os: [os] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(libc ? { libc: [libc] } : {}),
    };
    added += 1;
  }
}
/**
 * The registry's integrity for name@version, or undefined when it does not serve that version.
 * @param {string} name
 * @param {string} version
 */
function publishedIntegrity(name, version) {
  try {
    const out = execFileSync('npm', ['view', `${name}@${version}`, 'dist.integrity'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return out.startsWith('sha512-') ? out : undefined;
  } catch {
    return undefined;
  }
}

const nameOf = (/** @type {string} */ path) =>
  path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
const missing = [];
for (const [path, entry] of Object.entries(packages)) {
  if (path === '' || entry.link || entry.integrity) continue;
  const integrity = publishedIntegrity(nameOf(path), entry.version);
  if (integrity) entry.integrity = integrity;
  else missing.push(`${nameOf(path)}@${entry.version}`);
}

lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
if (missing.length > 0) {
  console.error(
    `complete-lockfile: no integrity hash, the registry does not serve: ${missing.join(', ')}`,
  );
  process.exit(1);
}
const entries = Object.keys(packages).length - 1;
console.log(`complete-lockfile: all ${entries} entries carry an integrity hash`);
