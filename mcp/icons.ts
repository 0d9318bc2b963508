import type { Icon } from '@modelcontextprotocol/server';

/**
 * The icons clients show beside the server and its tools. They travel as data: URIs (allowed by
 * the MCP `Icon` type) so a client renders them without another request, CORS or a public URL.
 */
function svgIcon(body: string): Icon[] {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="#1f5fbf" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`;
  return [
    {
      src: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
      mimeType: 'image/svg+xml',
      sizes: ['any'],
    },
  ];
}

/** Herald: a speech bubble (a message) with a tick (delivered). */
export const serverIcons = svgIcon(
  '<path d="M4 5h16v11H9l-5 4z"/><path d="M8.5 10.5l2.5 2.5 4.5-4.5"/>',
);

/** The subject each reporting tool answers about. */
export const toolIcons = {
  campaigns: svgIcon('<path d="M3 10v4h3l6 4V6L6 10z"/><path d="M16 9a4 4 0 0 1 0 6"/>'),
  deliveries: svgIcon(
    '<path d="M4 20V10"/><path d="M10 20V4"/><path d="M16 20v-7"/><path d="M3 20h18"/>',
  ),
  quickSends: svgIcon('<path d="M21 3L3 11l7 3 3 7z"/><path d="M10 14l11-11"/>'),
  team: svgIcon(
    '<circle cx="9" cy="8" r="3"/><path d="M3 20a6 6 0 0 1 12 0"/><circle cx="17" cy="9" r="2.5"/><path d="M15.5 14.5A5 5 0 0 1 21 20"/>',
  ),
} satisfies Record<string, Icon[]>;
