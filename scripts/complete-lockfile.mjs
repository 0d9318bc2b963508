#!/usr/bin/env node
// The registry this project installs from serves only the platform packages of the machines it
// runs on, so `npm install` leaves other platforms' optional binaries (biome, swc, esbuild…) out
// of package-lock.json and `npm ci` then refuses the lock. This adds those entries back, marked
// optional with the os/cpu their names declare, so npm skips them here and installs them where
// they fit. Run it after `npm install` changes the lock.
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

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
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
lock.packages = Object.fromEntries(
  Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
);
writeFileSync(LOCK, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`complete-lockfile: added ${added} optional platform entries`);
