/**
 * What a layout check reads from a rendered page (the dashboard's Chromium
 * tests): text rendered under 11 px (SVG text at its drawn scale), elements
 * past the right edge, the page's scroll width and height.
 */
import type { FuelStatus } from '@pacer/contract';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

export interface PageLayout {
  /** `size px: text` of each text node rendered under 11 px. */
  readonly small: readonly string[];
  /** Text nodes measured (rendered, not blank). */
  readonly measured: number;
  /** Text of the cells, labels and paragraphs whose right edge is past the viewport. */
  readonly offscreen: readonly string[];
  readonly scrollWidth: number;
  readonly height: number;
  readonly charts: number;
}

export async function measureLayout(page: Page): Promise<PageLayout> {
  return page.evaluate(() => {
    const small: string[] = [];
    let measured = 0;
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const parent = node.parentElement;
      if (!parent || (node.textContent ?? '').trim() === '' || parent.closest('title, script, style')) continue;
      const range = document.createRange();
      range.selectNodeContents(node);
      const box = range.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue; // not rendered (a closed <details>, a hidden head)
      const css = parseFloat(getComputedStyle(parent).fontSize);
      // SVG text scales with its viewBox: the rendered size is the CSS size times the drawing's scale.
      const svg = parent.closest('svg');
      const scale = svg ? (svg.getScreenCTM()?.a ?? 1) : 1;
      measured += 1;
      if (css * scale < 11)
        small.push(`${(css * scale).toFixed(1)} px: ${(node.textContent ?? '').trim().slice(0, 40)}`);
    }
    const main = document.querySelector('main') ?? document.body;
    const offscreen = Array.from(main.querySelectorAll('th, td, text, p, li, h2, h3, h4'))
      .filter((element) => element.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((element) => (element.textContent ?? '').trim().slice(0, 40));
    return {
      small,
      measured,
      offscreen,
      scrollWidth: document.documentElement.scrollWidth,
      height: document.documentElement.scrollHeight,
      charts: document.querySelectorAll('svg.chart').length,
    };
  });
}

/** The dashboard's fuel status words, which are not recovery's Ready / Maintain / Recover. */
export const FUEL_STATUS_WORDS: Readonly<Record<FuelStatus, string>> = {
  ready: 'Fuelled',
  top_up: 'Top up',
  at_risk: 'At risk',
  not_logged: 'Not logged',
};

/**
 * The dashboard's layout rules at `width` px: text was measured, none of it
 * renders under 11 px, nothing scrolls sideways or ends off screen, and all
 * five charts (recovery, fitness, form, liver, muscle) are drawn.
 */
export function expectDashboardLayout(layout: PageLayout, width: number): void {
  expect(layout.measured).toBeGreaterThan(100);
  expect(layout.small).toEqual([]);
  expect(layout.scrollWidth).toBeLessThanOrEqual(width);
  expect(layout.offscreen).toEqual([]);
  expect(layout.charts).toBe(5);
}
