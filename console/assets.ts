/**
 * Every script and style the console uses, served by the console itself: the service must work on
 * a closed network, so nothing comes from a CDN. Third-party files are read from their npm
 * packages (the version package-lock.json pins), the console's own from console/assets.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

const resolve = createRequire(import.meta.url).resolve;
const own = (name: string) => fileURLToPath(new URL(`./assets/${name}`, import.meta.url));

const FILES: Record<string, { path: string; type: string }> = {
  'htmx.min.js': { path: resolve('htmx.org/dist/htmx.min.js'), type: 'text/javascript' },
  'uPlot.iife.min.js': { path: resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript' },
  'uPlot.min.css': { path: resolve('uplot/dist/uPlot.min.css'), type: 'text/css' },
  'console.js': { path: own('console.js'), type: 'text/javascript' },
  'console.css': { path: own('console.css'), type: 'text/css' },
};

interface Asset {
  body: Buffer;
  type: string;
  version: string;
}

const loaded = new Map<string, Asset>();

function load(name: string): Asset | undefined {
  const file = FILES[name];
  if (!file) return undefined;
  let asset = loaded.get(name);
  if (!asset) {
    const body = readFileSync(file.path);
    const version = createHash('sha256').update(body).digest('hex').slice(0, 12);
    asset = { body, type: `${file.type}; charset=utf-8`, version };
    loaded.set(name, asset);
  }
  return asset;
}

/** The asset's URL with its content hash, so browsers may keep it for a year. */
export function assetUrl(name: string): string {
  const asset = load(name);
  if (!asset) throw new Error(`no console asset ${name}`);
  return `/console/assets/${name}?v=${asset.version}`;
}

export async function assetRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>('/assets/:name', async (request, reply) => {
    const asset = load(request.params.name);
    if (!asset) return reply.code(404).type('text/plain; charset=utf-8').send('Not found.');
    return reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .type(asset.type)
      .send(asset.body);
  });
}
