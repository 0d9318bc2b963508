#!/usr/bin/env node
// @ts-check
// `npm run build`: Herald compiled to JavaScript in dist/, laid out as the source tree, for the
// production image (Dockerfile), which runs it with plain node: no tsx, no TypeScript compiler.
// Development keeps running the sources through tsx (bin/herald.js); nothing reads dist/ but
// the image. Besides tsc's output: the SQL migrations, and a launcher without tsx.
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = `${root}dist/`;

rmSync(dist, { recursive: true, force: true });
try {
  const tsc = `${root}node_modules/typescript/bin/tsc`;
  execFileSync(process.execPath, [tsc, '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
} catch {
  // tsc has printed its errors.
  process.exit(1);
}
cpSync(`${root}db/migrations`, `${dist}db/migrations`, { recursive: true });
// The console's templates and its own scripts and styles are read from beside its code.
for (const folder of ['console/views', 'console/assets']) {
  cpSync(`${root}${folder}`, `${dist}${folder}`, { recursive: true });
}
mkdirSync(`${dist}bin`, { recursive: true });
writeFileSync(
  `${dist}bin/herald.js`,
  `#!/usr/bin/env node
// Herald compiled to JavaScript (npm run build): the production image's launcher, without tsx.
await import('../cli/main.js');
`,
);
chmodSync(`${dist}bin/herald.js`, 0o755);
console.log('build: dist/ (run with node dist/bin/herald.js)');
