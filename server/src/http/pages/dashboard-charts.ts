import { html, type SafeHtml } from './html.ts';

/**
 * Line charts drawn on the server as SVG: no script, no network, no library.
 * The viewBox scales the chart to the width of the page; every drawn point
 * carries its data as attributes (supplied by the caller) and a `<title>`, so
 * the numbers can be read back from the page as well as seen.
 */

export interface ChartPoint {
  readonly x: number;
  /** `null` leaves a gap: the line breaks there and no point is drawn. */
  readonly y: number | null;
  /** The point's data attributes, e.g. html`data-date="…" data-value="…"`. */
  readonly data: SafeHtml;
  readonly title: string;
}

export interface ChartSeries {
  readonly className: string;
  readonly points: readonly ChartPoint[];
  /** Draw a marker at every point with a value (default), or only those listed by `markerAt`. */
  readonly markerAt?: (point: ChartPoint) => boolean;
}

export interface AxisTick {
  readonly value: number;
  readonly label: string;
  /** x axis only: the label row under the axis (0 first). */
  readonly row?: number;
  /** `major` grid line, `minor` grid line, or none. */
  readonly grid?: 'major' | 'minor' | 'none';
}

export interface Axis {
  readonly min: number;
  readonly max: number;
  readonly ticks: readonly AxisTick[];
  readonly title: string;
}

/** A stretch of the x axis (a workout) or of the y axis (a status zone), drawn behind the lines. */
export interface ChartBand {
  readonly from: number;
  readonly to: number;
  readonly className: string;
  readonly data?: SafeHtml;
  readonly title?: string;
  /** x bands only: a short label at the top of the plot, from the band's start (a workout's fuel status). */
  readonly label?: string;
}

/** A bar from 0 to `value` at one x (a day's training stress). */
export interface ChartBar {
  readonly x: number;
  readonly value: number;
  readonly className: string;
  readonly data: SafeHtml;
  readonly title: string;
}

/** A vertical mark at one x (a meal, now), with an optional label at its top. */
export interface ChartMarker {
  readonly at: number;
  readonly className: string;
  readonly data?: SafeHtml;
  readonly title: string;
  readonly label?: string;
}

export interface LineChartOptions {
  /** The accessible name: a one-line summary of what the chart shows. */
  readonly ariaLabel: string;
  readonly title: string;
  readonly x: Axis;
  readonly y: Axis;
  readonly series: readonly ChartSeries[];
  readonly xBands?: readonly ChartBand[];
  readonly yBands?: readonly ChartBand[];
  /** Horizontal reference lines (e.g. a target level). */
  readonly yRules?: readonly { readonly value: number; readonly className: string; readonly label: string }[];
  readonly markers?: readonly ChartMarker[];
  /** Bars behind the lines, each one x step wide at most (the x axis counts steps, e.g. days). */
  readonly bars?: readonly ChartBar[];
}

// Geometry in SVG user units; the y-axis title sits above the plot so phones keep the full width.
const WIDTH = 600;
const PLOT = { left: 50, right: 588, top: 48, bottom: 248 } as const;
const ROW_HEIGHT = 22;
const MARKER_RADIUS = 2.4;
/** Room a band label needs to the right of its band's start (about 14 characters at the phone size). */
const BAND_LABEL_ROOM = 160;

const fixed = (value: number) => value.toFixed(1);

/** 0 and round steps (1, 2 or 5 × 10ⁿ) from at most `min` to at least `max`, about `count` of them. */
export function niceTicks(min: number, max: number, count = 5): number[] {
  const low = Math.min(min, max);
  const high = Math.max(min, max) > low ? Math.max(min, max) : low + 1;
  const rough = (high - low) / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const step = [1, 2, 5, 10].map((factor) => factor * magnitude).find((candidate) => candidate >= rough) ?? rough;
  const first = Math.floor(low / step + 1e-9);
  const last = Math.ceil(high / step - 1e-9);
  return Array.from({ length: last - first + 1 }, (_, index) => Number(((first + index) * step).toPrecision(12)));
}

/** Consecutive points with a value, as `M … L …` path data; a `null` starts a new piece. */
function pathOf(points: readonly { px: number; py: number | null }[]): string {
  const pieces: string[] = [];
  let current: string[] = [];
  for (const point of points) {
    if (point.py === null) {
      if (current.length > 0) pieces.push(current.join(' '));
      current = [];
      continue;
    }
    current.push(`${current.length === 0 ? 'M' : 'L'}${fixed(point.px)} ${fixed(point.py)}`);
  }
  if (current.length > 0) pieces.push(current.join(' '));
  return pieces.join(' ');
}

/** Keep edge labels inside the drawing. */
function anchorFor(px: number): string {
  if (px > PLOT.right - 24) return 'end';
  if (px < PLOT.left + 24) return 'start';
  return 'middle';
}

/** Value to SVG user units on both axes, and the axes themselves. */
interface Scale {
  readonly x: Axis;
  readonly y: Axis;
  readonly px: (value: number) => number;
  readonly py: (value: number) => number;
}

function scaleOf(x: Axis, y: Axis): Scale {
  const spanX = x.max - x.min || 1;
  const spanY = y.max - y.min || 1;
  return {
    x,
    y,
    px: (value) => PLOT.left + ((value - x.min) / spanX) * (PLOT.right - PLOT.left),
    py: (value) => PLOT.bottom - ((value - y.min) / spanY) * (PLOT.bottom - PLOT.top),
  };
}

/** Horizontal grid lines with the y labels, then vertical ones with the x labels (in their rows). */
function gridLines({ x, y, px, py }: Scale): SafeHtml {
  const yGrid = y.ticks.map(
    (
      tick,
    ) => html`<line class="grid" x1="${PLOT.left}" x2="${PLOT.right}" y1="${fixed(py(tick.value))}" y2="${fixed(py(tick.value))}" />
      <text x="${PLOT.left - 6}" y="${fixed(py(tick.value) + 4)}" text-anchor="end">${tick.label}</text>`,
  );
  const xGrid = x.ticks.map((tick) => {
    const at = fixed(px(tick.value));
    const grid = tick.grid ?? 'minor';
    return html`${grid === 'none' ? undefined : html`<line class="grid ${grid}" x1="${at}" x2="${at}" y1="${PLOT.top}" y2="${PLOT.bottom}" />`}
      <text x="${at}" y="${PLOT.bottom + ((tick.row ?? 0) + 1) * ROW_HEIGHT - 3}" text-anchor="${anchorFor(px(tick.value))}"
        >${tick.label}</text
      >`;
  });
  return html`${yGrid} ${xGrid}`;
}

/** The y bands (status zones), then the x bands (workouts), clamped to the plot. */
function bandRects(options: LineChartOptions, { x, y, px, py }: Scale): SafeHtml {
  const clampY = (value: number) => Math.min(Math.max(value, y.min), y.max);
  const yBands = (options.yBands ?? []).map((band) => {
    const top = py(clampY(Math.max(band.from, band.to)));
    const bottom = py(clampY(Math.min(band.from, band.to)));
    return html`<rect class="${band.className}" x="${PLOT.left}" y="${fixed(top)}" width="${PLOT.right - PLOT.left}" height="${fixed(bottom - top)}" ${band.data} />`;
  });
  const clampX = (value: number) => Math.min(Math.max(value, x.min), x.max);
  const xBands = (options.xBands ?? []).map((band) => {
    const left = px(clampX(band.from));
    const width = Math.max(px(clampX(band.to)) - left, 1.5);
    return html`<rect class="${band.className}" x="${fixed(left)}" y="${PLOT.top}" width="${fixed(width)}" height="${PLOT.bottom - PLOT.top}" ${band.data}
      >${band.title === undefined ? undefined : html`<title>${band.title}</title>`}</rect
    >`;
  });
  return html`${yBands} ${xBands}`;
}

/** The x bands' labels, in the plot's top row, drawn over the lines so they stay readable. */
function bandLabels(options: LineChartOptions, { x, px }: Scale): SafeHtml {
  return html`${(options.xBands ?? []).flatMap((band) => {
    if (band.label === undefined) return [];
    const at = px(Math.min(Math.max(band.from, x.min), x.max));
    // From the band's start to the right, unless that would run off the plot.
    const anchor = at > PLOT.right - BAND_LABEL_ROOM ? 'end' : 'start';
    return [
      html`<text class="band-label ${band.className}" x="${fixed(at)}" y="${PLOT.top + 16}" text-anchor="${anchor}" ${band.data}
        >${band.label}</text
      >`,
    ];
  })}`;
}

/** Bars from 0 (or the axis minimum, when above 0) to each value, one x step wide less a gap. */
function barRects(options: LineChartOptions, { x, y, px, py }: Scale): SafeHtml {
  const step = (PLOT.right - PLOT.left) / Math.max(1, x.max - x.min);
  const width = Math.max(1, step * 0.7);
  const base = py(Math.max(0, y.min));
  return html`${(options.bars ?? []).map((bar) => {
    const top = py(Math.min(Math.max(bar.value, y.min), y.max));
    const left = Math.min(Math.max(px(bar.x) - width / 2, PLOT.left), PLOT.right - width);
    return html`<rect class="bar ${bar.className}" x="${fixed(left)}" y="${fixed(Math.min(top, base))}" width="${fixed(width)}" height="${fixed(Math.abs(base - top))}" ${bar.data}
      ><title>${bar.title}</title></rect
    >`;
  })}`;
}

/** Reference lines across the plot, then the vertical markers (meals, now). */
function rulesAndMarkers(options: LineChartOptions, { px, py }: Scale): SafeHtml {
  const yRules = (options.yRules ?? []).map(
    (
      rule,
    ) => html`<line class="${rule.className}" x1="${PLOT.left}" x2="${PLOT.right}" y1="${fixed(py(rule.value))}" y2="${fixed(py(rule.value))}" />
      <text class="rule-label" x="${PLOT.right - 2}" y="${fixed(py(rule.value) - 3)}" text-anchor="end">${rule.label}</text>`,
  );
  const markers = (options.markers ?? []).map((marker) => {
    const at = fixed(px(marker.at));
    return html`<g class="${marker.className}" ${marker.data}>
      <title>${marker.title}</title>
      <line x1="${at}" x2="${at}" y1="${PLOT.top}" y2="${PLOT.bottom}" />
      <path d="M${at} ${PLOT.top + 7} l-5 -8 h10 z" />
      ${marker.label === undefined ? undefined : html`<text x="${at}" y="${PLOT.top - 6}" text-anchor="${anchorFor(px(marker.at))}">${marker.label}</text>`}
    </g>`;
  });
  return html`${yRules} ${markers}`;
}

/** Each series: its line (broken at gaps) and a circle, with the point's data and title, where it has a marker. */
function seriesLines(options: LineChartOptions, { px, py }: Scale): SafeHtml[] {
  return options.series.map((line) => {
    const drawn = line.points.map((point) => ({ point, px: px(point.x), py: point.y === null ? null : py(point.y) }));
    const shown = drawn.filter(
      (entry): entry is typeof entry & { py: number } =>
        entry.py !== null && (line.markerAt === undefined || line.markerAt(entry.point)),
    );
    return html`<g class="series ${line.className}">
      <path class="line" d="${pathOf(drawn)}" />
      ${shown.map(
        (entry) =>
          html`<circle cx="${fixed(entry.px)}" cy="${fixed(entry.py)}" r="${MARKER_RADIUS}" ${entry.point.data}><title>${entry.point.title}</title></circle>`,
      )}
    </g>`;
  });
}

export function lineChart(options: LineChartOptions): SafeHtml {
  const { x, y } = options;
  const scale = scaleOf(x, y);
  const rows = Math.max(1, ...x.ticks.map((tick) => (tick.row ?? 0) + 1));
  const xTitleY = PLOT.bottom + rows * ROW_HEIGHT + 24;
  const height = xTitleY + 8;
  return html`<svg
    class="chart"
    viewBox="0 0 ${WIDTH} ${height}"
    role="img"
    aria-label="${options.ariaLabel}"
    xmlns="http://www.w3.org/2000/svg"
  >
    <title>${options.title}</title>
    ${bandRects(options, scale)} ${gridLines(scale)} ${barRects(options, scale)} ${rulesAndMarkers(options, scale)}
    ${seriesLines(options, scale)} ${bandLabels(options, scale)}
    <line class="axis" x1="${PLOT.left}" x2="${PLOT.right}" y1="${PLOT.bottom}" y2="${PLOT.bottom}" />
    <line class="axis" x1="${PLOT.left}" x2="${PLOT.left}" y1="${PLOT.top}" y2="${PLOT.bottom}" />
    <text class="axis-title" x="${PLOT.left}" y="18" text-anchor="start">${y.title}</text>
    <text class="axis-title" x="${(PLOT.left + PLOT.right) / 2}" y="${xTitleY}" text-anchor="middle">${x.title}</text>
  </svg>`;
}
