// Herald console: small progressive enhancements. Every page works without this file; it adds
// confirmations, copy buttons, CSV import into Quick Send, the browser's time zone for Send
// later, and the daily charts.
(() => {
  // Confirmation before destructive actions: <form data-confirm="Revoke this key?">.
  document.addEventListener('submit', (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement)) return;
    const question = form.dataset.confirm;
    if (question && !window.confirm(question)) event.preventDefault();
  });

  // Copy buttons: <button data-copy="element-id">.
  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
    if (!button) return;
    const source = document.getElementById(button.getAttribute('data-copy') || '');
    if (!source || !navigator.clipboard) return;
    navigator.clipboard.writeText(source.textContent.trim()).then(() => {
      const label = button.textContent;
      button.textContent = 'Copied';
      setTimeout(() => {
        button.textContent = label;
      }, 1500);
    });
  });

  // Quick Send: a CSV file's first column appended to the recipients box.
  document.addEventListener('change', (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.type !== 'file' || !input.dataset.csvInto)
      return;
    const target = document.getElementById(input.dataset.csvInto);
    const file = input.files?.[0];
    if (!target || !file) return;
    file.text().then((content) => {
      const numbers = content
        .split(/\r?\n/)
        .map((line) =>
          line
            .split(/[,;\t]/)[0]
            .replace(/^"|"$/g, '')
            .trim(),
        )
        .filter((value) => value !== '' && !/^[a-z_ ]+$/i.test(value));
      const existing = target.value.trim();
      target.value = (existing ? `${existing}\n` : '') + numbers.join('\n');
      target.dispatchEvent(new Event('input', { bubbles: true }));
    });
  });

  // Create campaign: a CSV file put whole into the variables box (the server reads it, and
  // Preview shows the first messages it makes).
  document.addEventListener('change', (event) => {
    const input = event.target;
    if (!(input instanceof HTMLInputElement) || input.type !== 'file' || !input.dataset.csvTextInto)
      return;
    const target = document.getElementById(input.dataset.csvTextInto);
    const file = input.files?.[0];
    if (!target || !file) return;
    file.text().then((content) => {
      target.value = content;
    });
  });

  // Quick Send: how many numbers the recipients box holds, as it is edited.
  document.addEventListener('input', (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || box.id !== 'recipients') return;
    const label = document.getElementById('recipient-count');
    if (!label) return;
    const count = box.value.split(/[\n,;\t]/).filter((value) => value.trim() !== '').length;
    label.textContent = `${count.toLocaleString('en-US')} recipient${count === 1 ? '' : 's'} entered`;
  });

  // Send later: the time zone select starts at the browser's zone (the page offers UTC without
  // this file); a zone chosen before (a form shown again) is kept.
  for (const select of document.querySelectorAll('select[data-browser-zone="choose"]')) {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (!zone) continue;
    if (![...select.options].some((option) => option.value === zone))
      select.add(new Option(zone, zone));
    select.value = zone;
  }

  // Daily charts: <div class="chart" data-series='{"days":[...],"sent":[...],...}'> (the
  // dashboard's) or '{"days":[...],"lines":[{"label":"...","values":[...]},...]}' (any lines).
  const PALETTE = [
    '#4c6ef5',
    '#e03131',
    '#f08c00',
    '#2f9e44',
    '#7048e8',
    '#0c8599',
    '#c2255c',
    '#5c940d',
  ];
  function drawCharts() {
    if (typeof window.uPlot !== 'function') return;
    for (const element of document.querySelectorAll('[data-series]')) {
      if (element.dataset.drawn) continue;
      element.dataset.drawn = '1';
      const data = JSON.parse(element.dataset.series);
      const width = Math.max(280, element.clientWidth);
      const lines = data.lines || [
        { label: 'Sent', values: data.sent, stroke: '#4c6ef5' },
        { label: 'Delivered', values: data.delivered, stroke: '#2f9e44' },
        { label: 'Failed', values: data.failed, stroke: '#e03131' },
      ];
      const series = [
        {},
        ...lines.map((line, index) => ({
          label: line.label,
          stroke: line.stroke || PALETTE[index % PALETTE.length],
          width: 2,
        })),
      ];
      const chart = new window.uPlot(
        { width, height: 240, series, axes: [{}, { size: 50 }], scales: { x: { time: true } } },
        [data.days, ...lines.map((line) => line.values)],
        element,
      );
      new ResizeObserver(() =>
        chart.setSize({ width: Math.max(280, element.clientWidth), height: 240 }),
      ).observe(element);
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', drawCharts);
  else drawCharts();
})();
