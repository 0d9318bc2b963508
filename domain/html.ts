/**
 * Plain HTML for the pages people open outside the console: OAuth sign-in and consent (mcp/),
 * the opt-out confirmation (api/). Pure string formatting, shared by the front ends.
 */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (character) => ESCAPES[character] as string);
}

/** A small self-contained page: Herald's forms work without scripts or external assets. */
export function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Herald</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}
h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password]{width:100%;padding:.5rem;box-sizing:border-box}
button{padding:.5rem 1.2rem;margin:1rem .5rem 0 0;font-size:1rem}.error{color:#b00020}.box{background:#f3f4f6;padding:.8rem;border-radius:6px;word-break:break-all}
</style></head><body>${body}</body></html>`;
}
