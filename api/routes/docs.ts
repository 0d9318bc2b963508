import type { FastifyInstance } from 'fastify';
import { referenceAsset, referenceAssetUrl } from '../reference-assets.js';

/**
 * The rendered reference (Swagger UI, from npm, served here: no CDN). Scripts and styles come
 * from this origin only, and nothing inline runs; `data:` images are the stylesheet's icons;
 * connect-src 'self' lets it read openapi.json and send "Try it out" requests to this API.
 */
export const REFERENCE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'";

const referencePage = () => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Herald API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${referenceAssetUrl('swagger-ui.css')}">
</head>
<body>
<noscript><p>The reference needs JavaScript; the description itself is <a href="openapi.json">openapi.json</a>.</p></noscript>
<div id="reference"></div>
<script src="${referenceAssetUrl('swagger-ui-bundle.js')}"></script>
<script src="${referenceAssetUrl('start-up.js')}"></script>
</body>
</html>
`;

/** Public (no auth): the OpenAPI document and its rendered reference, all left out of the document. */
export async function docsRoutes(app: FastifyInstance) {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .header('content-security-policy', REFERENCE_POLICY)
      .send(referencePage()),
  );
  app.get<{ Params: { name: string } }>(
    '/docs/assets/:name',
    { schema: { hide: true } },
    async (request, reply) => {
      const asset = referenceAsset(request.params.name);
      if (!asset) return reply.callNotFound();
      return reply
        .header('cache-control', 'public, max-age=31536000, immutable')
        .type(asset.type)
        .send(asset.body);
    },
  );
}
