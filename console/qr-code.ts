/**
 * A QR code drawn on the server as inline SVG (uqr: no dependencies, no install script), so the
 * TOTP set-up needs no script and no style attribute under the console's CSP. Only `fill`, `d`,
 * `viewBox`, `width` and `height` attributes: nothing the policy forbids.
 */
import { renderSVG } from 'uqr';

/** `text` as a QR code, `size` pixels square; `label` read out by screen readers. */
export function qrCodeSvg(text: string, label: string, size = 200): string {
  const svg = renderSVG(text, { border: 4 });
  // renderSVG's markup carries only the code's own data (no input text), so it needs no escaping;
  // the label is escaped as every other text is.
  const escapedLabel = label.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return svg.replace(
    '<svg ',
    `<svg class="qr-code" role="img" aria-label="${escapedLabel}" width="${size}" height="${size}" `,
  );
}
