/**
 * The widths a console page must fit (docs/console.md): a 1366 px laptop, a 1024 px tablet or
 * small window, a 390 px phone; and what "fits" means, measured in the browser.
 */
import type { FastifyInstance } from 'fastify';
import type { Page } from 'playwright-core';

export const WIDTHS = [1366, 1024, 390] as const;

/** The narrowest width at which every table shows all its columns without scrolling. */
const TABLES_FIT_FROM = 1024;

/**
 * The console's GET routes, read from fastify's route table (`printRoutes`, one path segment
 * per tree level), without its static assets: `/console/w/:workspace/team`, …
 */
export function consoleGetRoutes(app: FastifyInstance): string[] {
  const tree = app.printRoutes({ commonPrefix: false, method: 'GET' });
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const node = /^([│ ]*)[├└]── (\S+)(?: \(([^)]*)\))?/.exec(line);
    if (!node) continue;
    const [, indent = '', segment = '', methods] = node;
    const depth = indent.length / 4;
    stack.length = depth;
    stack.push(segment);
    if (methods?.split(', ').includes('GET')) routes.push(stack.join(''));
  }
  return routes.filter(
    (route) =>
      (route === '/console' || route.startsWith('/console/')) &&
      !route.startsWith('/console/assets/'),
  );
}

/**
 * Why the page does not fit its window, empty when it does: the page scrolls sideways, or an
 * element outside a scroll container (`.table-wrap`, `pre`) or a chart reaches past either edge, or,
 * from 1024 px, a table hides columns in its container.
 */
export async function overflowProblems(page: Page): Promise<string[]> {
  // A chart redraws a frame after the window changes. (Browser code is text: no DOM types here.)
  await page.evaluate(
    'new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))',
  );
  return page.evaluate(`(${MEASURE})(${TABLES_FIT_FROM})`);
}

/** Runs in the page: the problems `overflowProblems` describes, at most six. */
const MEASURE = `(tablesFitFrom) => {
  const width = window.innerWidth;
  const problems = [];
  const name = (element) => {
    const id = element.id ? '#' + element.id : '';
    const classes = [...element.classList].map((value) => '.' + value).join('');
    const text = (element.textContent ?? '').trim().replace(/\\s+/g, ' ').slice(0, 40);
    return element.tagName.toLowerCase() + id + classes + ' "' + text + '"';
  };
  const scrolled = document.documentElement.scrollWidth;
  if (scrolled > width) problems.push('the page is ' + scrolled + 'px wide');
  const containers = [...document.querySelectorAll('.table-wrap, .chart, pre')];
  const reported = [];
  for (const element of document.querySelectorAll('body *')) {
    if (containers.some((container) => container !== element && container.contains(element))) continue;
    if (reported.some((outer) => outer.contains(element))) continue;
    const box = element.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) continue;
    if (box.right > width + 0.5 || box.left < -0.5) {
      reported.push(element);
      problems.push(name(element) + ' spans ' + Math.round(box.left) + '-' + Math.round(box.right) + 'px');
    }
  }
  if (width >= tablesFitFrom) {
    for (const wrap of document.querySelectorAll('.table-wrap')) {
      const hidden = wrap.scrollWidth - wrap.clientWidth;
      if (hidden > 1) problems.push(name(wrap) + ' hides ' + hidden + 'px of its table');
    }
  }
  return problems.slice(0, 6);
}`;
