/**
 * The API reference's scripts and styles, served by Herald itself: the reference must work on a
 * closed network, so nothing comes from a CDN. Swagger UI is read from its npm package (the
 * version package-lock.json pins); its start-up script is Herald's own, a file rather than an
 * inline script, so the page's policy can allow scripts from this origin only.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const resolve = createRequire(import.meta.url).resolve;

/** Swagger UI's options: the document from this origin, no validator badge (it calls out). */
const START_UP = `window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    defaultModelsExpandDepth: 0,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
  });
});
`;

const SOURCES: Record<string, { read: () => Buffer; type: string }> = {
  'swagger-ui-bundle.js': {
    read: () => readFileSync(resolve('swagger-ui-dist/swagger-ui-bundle.js')),
    type: 'text/javascript',
  },
  'swagger-ui.css': {
    read: () => readFileSync(resolve('swagger-ui-dist/swagger-ui.css')),
    type: 'text/css',
  },
  'start-up.js': { read: () => Buffer.from(START_UP), type: 'text/javascript' },
};

export interface ReferenceAsset {
  body: Buffer;
  type: string;
  version: string;
}

const loaded = new Map<string, ReferenceAsset>();

export function referenceAsset(name: string): ReferenceAsset | undefined {
  const source = Object.hasOwn(SOURCES, name) ? SOURCES[name] : undefined;
  if (!source) return undefined;
  let asset = loaded.get(name);
  if (!asset) {
    const body = source.read();
    const version = createHash('sha256').update(body).digest('hex').slice(0, 12);
    asset = { body, type: `${source.type}; charset=utf-8`, version };
    loaded.set(name, asset);
  }
  return asset;
}

/** The asset's URL with its content hash, so browsers may keep it for a year. */
export function referenceAssetUrl(name: string): string {
  const asset = referenceAsset(name);
  if (!asset) throw new Error(`no API reference asset ${name}`);
  return `/api/v1/docs/assets/${name}?v=${asset.version}`;
}
