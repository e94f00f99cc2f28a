import { MCP_STATS_WINDOW_HOURS_MAX, type McpStats, McpStatsQuerySchema } from '@pacer/contract';
import { type Request, type Response, Router } from 'express';
import { getMcpStats } from '../../modules/mcp-audit/mcp-stats.service.ts';
import type { PageDeps } from './account.pages.ts';
import { html, page, type SafeHtml, sendMessagePage, sendPage } from './html.ts';
import { signedInUserOr303 } from './session-guard.ts';

/** The windows offered by the selector; `?windowHours=` accepts any whole hour count the REST route does. */
const WINDOWS = [
  { hours: 24, label: '24 hours' },
  { hours: 168, label: '7 days' },
  { hours: 720, label: '30 days' },
] as const;

type ToolStats = McpStats['byTool'][number];
type Percentile = keyof McpStats['latencyMs'];
/** Every percentile the contract reports, in chart order: a new one fails to compile until it has a label. */
const PERCENTILE_LABELS: Record<Percentile, string> = {
  p50: 'p50 (median)',
  p95: 'p95',
  p99: 'p99',
};
const PERCENTILES = (Object.keys(PERCENTILE_LABELS) as Percentile[]).map((key) => ({
  key,
  label: PERCENTILE_LABELS[key],
}));

function formatMs(ms: number | null): string {
  return ms === null ? '–' : `${ms} ms`;
}

/** Count entries, most first (ties by name) so the tables read the same on every load. */
function sortedCounts(record: Readonly<Record<string, number>>): [string, number][] {
  return Object.entries(record).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
}

function countTable(labels: { key: string; count: string }, rows: [string, number][], empty: string): SafeHtml {
  if (rows.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">${labels.key}</th>
          <th scope="col" class="num">${labels.count}</th>
        </tr>
      </thead>
      <tbody>
        ${rows.map(
          ([key, count]) => html`<tr>
            <td>${key}</td>
            <td class="num">${count}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function section(id: string, title: string, body: SafeHtml): SafeHtml {
  return html`<section aria-labelledby="${id}-heading">
    <h2 id="${id}-heading">${title}</h2>
    ${body}
  </section>`;
}

/** 0 and 3-5 round steps (1, 2 or 5 × 10ⁿ) covering `max`. */
function axisTicks(max: number): number[] {
  const top = max > 0 ? max : 1;
  const rough = top / 4;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= rough) ?? rough;
  const steps = Math.ceil(top / step - 1e-9);
  return Array.from({ length: steps + 1 }, (_, index) => Number((index * step).toPrecision(12)));
}

// Chart geometry in SVG user units; the viewBox scales it to the page width.
const CHART = {
  width: 400,
  plotLeft: 52,
  /** Room right of the longest bar for its value label. */
  plotRight: 400 - 64,
  top: 6,
  nameHeight: 18,
  barHeight: 13,
  barGap: 4,
  groupGap: 10,
} as const;
const GROUP_HEIGHT = CHART.nameHeight + PERCENTILES.length * (CHART.barHeight + CHART.barGap) + CHART.groupGap;

/** A bar's value right of its end, or inside it where it would run off the chart (about 8 units a character). */
function valueLabel(text: string, barEnd: number, y: number): SafeHtml {
  return barEnd + 4 + text.length * 8 > CHART.width
    ? html`<text class="inside" x="${(barEnd - 4).toFixed(2)}" y="${y}" text-anchor="end">${text}</text>`
    : html`<text x="${(barEnd + 4).toFixed(2)}" y="${y}">${text}</text>`;
}

/** One tool's group: its name, then a bar (with data attributes and title) and value per percentile. */
function toolBars(tool: ToolStats, groupTop: number, x: (ms: number) => number): SafeHtml {
  const bars = PERCENTILES.map(({ key }, row) => {
    const ms = tool[key];
    const barY = groupTop + CHART.nameHeight + row * (CHART.barHeight + CHART.barGap);
    const textY = barY + CHART.barHeight - 3;
    const barWidth = ms === null ? 0 : x(ms) - CHART.plotLeft;
    return html`<text x="${CHART.plotLeft - 6}" y="${textY}" text-anchor="end">${key}</text>
      ${
        ms === null
          ? undefined
          : html`<rect
              class="bar-${key}"
              x="${CHART.plotLeft}"
              y="${barY}"
              width="${barWidth.toFixed(2)}"
              height="${CHART.barHeight}"
              data-tool="${tool.tool}"
              data-percentile="${key}"
              data-ms="${ms}"
            ><title>${tool.tool} ${key}: ${formatMs(ms)}</title></rect>`
      }
      ${valueLabel(formatMs(ms), CHART.plotLeft + barWidth, textY)}`;
  });
  return html`<g class="tool" data-tool="${tool.tool}">
    <text class="tool-name" x="${CHART.plotLeft + 4}" y="${groupTop + 13}">${tool.tool}</text>
    ${bars}
  </g>`;
}

/**
 * Per-tool latency as horizontal bars, drawn on the server (no script, no
 * network). Each bar carries its tool, percentile and milliseconds as data
 * attributes; the table below the chart holds the same numbers as text.
 */
function latencyChart(byTool: readonly ToolStats[]): SafeHtml {
  const ticks = axisTicks(Math.max(0, ...byTool.flatMap((tool) => [tool.p50 ?? 0, tool.p95 ?? 0, tool.p99 ?? 0])));
  const domainMax = ticks[ticks.length - 1] ?? 1;
  const plotWidth = CHART.plotRight - CHART.plotLeft;
  const x = (ms: number) => CHART.plotLeft + (ms / domainMax) * plotWidth;
  const axisY = CHART.top + byTool.length * GROUP_HEIGHT;
  const height = axisY + 44;
  const label = `Latency per tool in milliseconds. ${byTool
    .map((tool) => `${tool.tool}: p50 ${tool.p50 ?? 'none'}, p95 ${tool.p95 ?? 'none'}, p99 ${tool.p99 ?? 'none'}`)
    .join('; ')}.`;

  const groups = byTool.map((tool, index) => toolBars(tool, CHART.top + index * GROUP_HEIGHT, x));

  const grid = ticks.map((tick) => {
    const tickX = x(tick).toFixed(2);
    return html`<line class="grid" x1="${tickX}" x2="${tickX}" y1="${CHART.top}" y2="${axisY}" />
      <text x="${tickX}" y="${axisY + 16}" text-anchor="middle">${tick}</text>`;
  });

  return html`<svg
    class="chart"
    viewBox="0 0 ${CHART.width} ${height}"
    role="img"
    aria-label="${label}"
    xmlns="http://www.w3.org/2000/svg"
  >
    <title>Latency per tool (ms)</title>
    ${grid} ${groups}
    <line class="axis" x1="${CHART.plotLeft}" x2="${CHART.plotRight}" y1="${axisY}" y2="${axisY}" />
    <line class="axis" x1="${CHART.plotLeft}" x2="${CHART.plotLeft}" y1="${CHART.top}" y2="${axisY}" />
    <text class="axis-title" x="${(CHART.plotLeft + CHART.plotRight) / 2}" y="${axisY + 36}" text-anchor="middle">
      Latency (ms)
    </text>
    <text
      class="axis-title"
      transform="translate(12 ${(CHART.top + axisY) / 2}) rotate(-90)"
      text-anchor="middle"
    >Tool and percentile</text>
  </svg>`;
}

function toolTable(byTool: readonly ToolStats[]): SafeHtml {
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col" class="num">Calls</th>
          <th scope="col" class="num">Errors</th>
          <th scope="col" class="num">p50 (ms)</th>
          <th scope="col" class="num">p95 (ms)</th>
          <th scope="col" class="num">p99 (ms)</th>
        </tr>
      </thead>
      <tbody>
        ${byTool.map(
          (tool) => html`<tr>
            <th scope="row">${tool.tool}</th>
            <td class="num">${tool.count}</td>
            <td class="num">${tool.errors}</td>
            <td class="num">${tool.p50 ?? '–'}</td>
            <td class="num">${tool.p95 ?? '–'}</td>
            <td class="num">${tool.p99 ?? '–'}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function clientsTable(clients: McpStats['topClients']): SafeHtml {
  if (clients.length === 0) return html`<p class="muted">No tool calls in this window.</p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">App</th>
          <th scope="col">Client ID</th>
          <th scope="col" class="num">Calls</th>
        </tr>
      </thead>
      <tbody>
        ${clients.map(
          (client) => html`<tr>
            <td>${client.name ?? html`<span class="muted">(unknown client)</span>`}</td>
            <td class="id">${client.clientId}</td>
            <td class="num">${client.count}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function windowSelector(current: number): SafeHtml {
  return html`<nav class="windows" aria-label="Time window">
    ${WINDOWS.map(
      (window) =>
        html`<a href="/admin?windowHours=${window.hours}" ${window.hours === current ? html`aria-current="page"` : undefined}
          >${window.label}</a
        >`,
    )}
  </nav>`;
}

function windowLabel(hours: number): string {
  return WINDOWS.find((window) => window.hours === hours)?.label ?? `${hours} hours`;
}

function overviewTable(stats: McpStats): SafeHtml {
  const overview: [string, string | number][] = [
    ['Tool calls', stats.totalExecutions],
    ['Latency p50', formatMs(stats.latencyMs.p50)],
    ['Latency p95', formatMs(stats.latencyMs.p95)],
    ['Latency p99', formatMs(stats.latencyMs.p99)],
    ['Rate-limited calls', stats.rateLimitHits],
    ['Refresh-token reuse detected', stats.refreshReuseDetected],
  ];
  return html`<div class="table-wrap">
    <table>
      <tbody>
        ${overview.map(
          ([name, value]) => html`<tr>
            <th scope="row">${name}</th>
            <td class="num">${value}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

function latencySection(byTool: readonly ToolStats[]): SafeHtml {
  if (byTool.length === 0) return html`<p class="muted">No tool calls in this window.</p>`;
  return html`<ul class="legend" aria-hidden="true">
      ${PERCENTILES.map(({ key, label }) => html`<li><span class="swatch swatch-${key}"></span>${label}</li>`)}
    </ul>
    ${latencyChart(byTool)} ${toolTable(byTool)}`;
}

/** The sections that are one table of counts each. */
function countSections(stats: McpStats): SafeHtml[] {
  const calls = { key: 'Status', count: 'Calls' };
  const dcr: [string, number][] = [
    ['Registered in this window', stats.dcr.registeredInWindow],
    ['Registered in all', stats.dcr.totalClients],
  ];
  return [
    section(
      'status',
      'Calls by status',
      countTable(calls, sortedCounts(stats.byStatus), 'No tool calls in this window.'),
    ),
    section(
      'errors',
      'Errors by code',
      countTable(
        { key: 'Error code', count: 'Calls' },
        sortedCounts(stats.byErrorCode),
        'No failed tool calls in this window.',
      ),
    ),
    section('clients', 'Top clients', clientsTable(stats.topClients)),
    section(
      'auth-failures',
      'Refused requests',
      countTable(
        { key: 'Reason', count: 'Requests' },
        sortedCounts(stats.authFailures),
        'No refused requests in this window.',
      ),
    ),
    section('dcr', 'Dynamic client registration', countTable({ key: 'Clients', count: 'Count' }, dcr, '')),
  ];
}

function adminPage(stats: McpStats): string {
  return page(
    'MCP statistics',
    html`<h1>MCP statistics</h1>
      <p>Tool calls and refused requests on <code>/mcp</code> in the last ${windowLabel(stats.windowHours)}.</p>
      ${windowSelector(stats.windowHours)} ${section('overview', 'Overview', overviewTable(stats))}
      ${section('latency', 'Latency per tool', latencySection(stats.byTool))} ${countSections(stats)}
      <nav><a href="/">Home</a> · <a href="/settings">Settings</a> · <a href="/developer">Developer portal</a></nav>`,
    'page-admin',
  );
}

function sendPageError(res: Response, status: 400 | 403, title: string, message: string): void {
  sendMessagePage(res, status, { title, message, back: { href: '/', label: 'Home' } });
}

/** `/admin`: MCP statistics for administrators (docs/design.md §3 "Operations"); the same numbers as the REST route. */
export function adminPages(deps: PageDeps): Router {
  const router = Router();

  router.get('/admin', async (req: Request, res: Response) => {
    const user = signedInUserOr303(req, res);
    if (!user) return;
    if (user.role !== 'admin') {
      sendPageError(res, 403, 'Forbidden', 'This page is for administrators only.');
      return;
    }
    const query = McpStatsQuerySchema.safeParse({ windowHours: req.query['windowHours'] });
    if (!query.success) {
      sendPageError(
        res,
        400,
        'Invalid window',
        `The window must be a whole number of hours from 1 to ${MCP_STATS_WINDOW_HOURS_MAX}.`,
      );
      return;
    }
    const stats = await getMcpStats(deps.db, {
      windowHours: query.data.windowHours,
      mcpResource: deps.config.mcpResource,
    });
    sendPage(res, adminPage(stats));
  });

  return router;
}
