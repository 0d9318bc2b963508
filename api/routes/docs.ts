import type { FastifyInstance } from 'fastify';

/** Self-contained (no CDN): renders the endpoints from openapi.json with a little inline JS. */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Herald API</title>
<style>
body { font: 15px/1.5 system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; }
section { border-top: 1px solid #ccc; padding: .5rem 0; }
code, .method { font-family: ui-monospace, monospace; }
.method { font-weight: bold; text-transform: uppercase; margin-right: .5rem; }
ul { margin: .25rem 0; }
</style>
</head>
<body>
<h1 id="title">Herald API</h1>
<p>Machine-readable description: <a href="openapi.json">openapi.json</a></p>
<div id="endpoints">Loading…</div>
<script>
const el = (tag, text, cls) => {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  if (cls) node.className = cls;
  return node;
};
fetch('openapi.json').then((r) => r.json()).then((doc) => {
  document.getElementById('title').textContent = doc.info.title + ' ' + doc.info.version;
  const root = document.getElementById('endpoints');
  root.textContent = '';
  for (const [path, item] of Object.entries(doc.paths || {})) {
    for (const [method, op] of Object.entries(item)) {
      const section = el('section');
      const head = el('h2');
      head.append(el('span', method, 'method'), el('code', path));
      section.append(head);
      if (op.summary) section.append(el('p', op.summary));
      const secured = (op.security || doc.security || []).length > 0;
      section.append(el('p', secured ? 'Authorization: Bearer <API key>' : 'No authentication'));
      const body = op.requestBody && op.requestBody.content['application/json'];
      if (body && body.schema.properties) {
        section.append(el('h3', 'Request body'));
        const list = el('ul');
        const required = body.schema.required || [];
        for (const [name, prop] of Object.entries(body.schema.properties)) {
          const item = el('li');
          item.append(el('code', name), ' ' + (required.includes(name) ? '(required) ' : '') +
            (prop.description || ''));
          list.append(item);
        }
        section.append(list);
      }
      section.append(el('h3', 'Responses'));
      const list = el('ul');
      for (const [status, response] of Object.entries(op.responses || {})) {
        const item = el('li');
        item.append(el('code', status), ' ' + (response.description || ''));
        list.append(item);
      }
      section.append(list);
      root.append(section);
    }
  }
}).catch((error) => {
  document.getElementById('endpoints').textContent = 'Could not load openapi.json: ' + error;
});
</script>
</body>
</html>
`;

/** Public (no auth): the OpenAPI document and a readable page, both left out of the document. */
export async function docsRoutes(app: FastifyInstance) {
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  app.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply
      .type('text/html; charset=utf-8')
      // Its one inline script reads openapi.json from this origin; nothing else is allowed.
      .header(
        'content-security-policy',
        "default-src 'none'; script-src 'unsafe-inline'; connect-src 'self'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
      )
      .send(DOCS_PAGE),
  );
}
