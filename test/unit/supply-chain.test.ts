import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/** Static checks of what the image and `npm ci` install (docs/security.md, "Supply chain"). */

const root = new URL('../../', import.meta.url);
const read = (file: string) => readFileSync(new URL(file, root), 'utf8');
const pkg = JSON.parse(read('package.json')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts: Record<string, string>;
};
const lock = JSON.parse(read('package-lock.json')) as {
  packages: Record<string, { version?: string; integrity?: string; link?: boolean }>;
};
const dockerfile = read('Dockerfile');

/** The Dockerfile's stages: name (or index) to its instructions, continuation lines joined. */
function stages(): Map<string, string[]> {
  const result = new Map<string, string[]>();
  let current: string[] = [];
  for (const line of dockerfile.replace(/\\\n/g, ' ').split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const from = /^FROM\s+\S+(?:\s+AS\s+(\S+))?/i.exec(trimmed);
    if (from) {
      current = [];
      result.set(from[1] ?? `stage-${result.size}`, current);
    }
    current.push(trimmed);
  }
  return result;
}

describe('package-lock.json', () => {
  it('carries a sha512 integrity hash for every package, other platforms included', () => {
    const entries = Object.entries(lock.packages).filter(([path, entry]) => path && !entry.link);
    expect(entries.length).toBeGreaterThan(300);
    const without = entries
      .filter(([, entry]) => !entry.integrity?.startsWith('sha512-'))
      .map(([path, entry]) => `${path}@${entry.version}`);
    expect(without).toEqual([]);
    // Other platforms' optional binaries are locked too (npm skips them where they do not fit).
    for (const name of ['@biomejs/cli-darwin-arm64', '@swc/core-win32-x64-msvc'])
      expect(lock.packages[`node_modules/${name}`]?.integrity, name).toMatch(/^sha512-/);
  });
});

describe('production image', () => {
  it('keeps the TypeScript toolchain out of the production dependencies', () => {
    for (const name of ['tsx', 'typescript', '@types/node']) {
      expect(pkg.dependencies[name], name).toBeUndefined();
      expect(pkg.devDependencies[name], name).toBeDefined();
    }
  });

  it('compiles in a build stage and runs the JavaScript with production dependencies only', () => {
    const all = stages();
    const final = [...all.values()].at(-1) ?? [];
    const named = (name: string) => all.get(name) ?? [];
    expect(named('build')).toContain('RUN npm ci --ignore-scripts --no-audit --no-fund');
    expect(named('build')).toContain('RUN npm run build');
    expect(named('deps')).toContain(
      'RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force',
    );
    // The final stage takes the compiled tree and the production node_modules, no sources.
    const copies = final.filter((line) => line.startsWith('COPY'));
    expect(copies).toEqual([
      'COPY package.json ./',
      'COPY --from=deps /app/node_modules ./node_modules',
      'COPY --from=build /app/dist ./',
    ]);
    expect(final).toContain('ENV NODE_ENV=production');
    expect(final.at(-1)).toBe('CMD ["node", "bin/herald.js", "api"]');
    expect(pkg.scripts.build).toBe('node scripts/build.mjs');
  });

  it('builds a launcher that loads the compiled CLI without tsx', () => {
    const build = read('scripts/build.mjs');
    expect(build).toContain("await import('../cli/main.js');");
    expect(build).toContain('db/migrations');
    expect(read('tsconfig.build.json')).toContain('"outDir": "dist"');
  });
});
