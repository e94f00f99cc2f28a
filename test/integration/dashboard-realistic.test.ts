/**
 * The dashboard for issue 21's realistic athlete (test/support/realistic-athlete.ts:
 * 67 days of wellness, 27 rides with a 6-day camp, meals most days, a 2.5 h
 * ride tomorrow and an untimed 4 h ride in 3 days), seeded through the real
 * API and signed in to in Chromium. At 1280 and 390 px: no text under 11 px,
 * no horizontal scroll, assumed meals drawn as assumed (one dashed marker per
 * assumed meal of the timeline), both rides' fuel status words and plan lines
 * as REST answers them, and the page height on a phone. Screenshots go to
 * /tmp/realistic-<width>.png (not committed) for a person to look at.
 */
import type { FuelTimeline, PlannedWorkoutFuel } from '@pacer/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { User } from '../../server/src/db/tables.ts';
import { addDays } from '../../server/src/lib/dates.ts';
import { usePortalBrowser } from '../support/browser.ts';
import { call } from '../support/http.ts';
import { FUEL_STATUS_WORDS, expectDashboardLayout, measureLayout } from '../support/page-layout.ts';
import { type RealisticAthlete } from '../support/realistic-athlete.ts';
import { startRealisticAthleteServer } from '../support/realistic-athlete-server.ts';
import type { TestServer } from '../support/test-server.ts';

/** Glycogen drawn: today and the two days after it. */
const FUEL_DAYS = 3;
/** A phone-width page this long is read by scrolling a few screens, not tens (the first round's was 6,021 px). */
const PHONE_HEIGHT_MAX_PX = 5500;

let server: TestServer;
let athlete: User;
let token: string;
let seeded: RealisticAthlete;

beforeAll(async () => {
  ({ server, athlete, token, seeded } = await startRealisticAthleteServer());
}, 300_000);
afterAll(async () => {
  await server?.stop();
});
const chromium = usePortalBrowser(() => server.url);

async function get<T>(path: string): Promise<T> {
  const res = await call<T>(server.url, 'GET', path, { token });
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
}

describe('the dashboard of the realistic athlete (Chromium)', () => {
  for (const width of [1280, 390]) {
    it(`at ${width} px: legible, no horizontal scroll, assumed meals drawn as assumed, both rides as REST says`, async () => {
      const timeline = await get<FuelTimeline>(
        `/api/fuel/timeline?from=${seeded.today}&to=${addDays(seeded.today, FUEL_DAYS - 1)}`,
      );
      const rides = [seeded.shortRide, seeded.longRide];
      const fuels = await Promise.all(
        rides.map((ride) => get<PlannedWorkoutFuel>(`/api/planned-workouts/${ride.id}/fuel`)),
      );

      const { page } = await chromium.signedInPage(athlete, '/dashboard');
      await page.setViewportSize({ width, height: 900 });
      const layout = await measureLayout(page);
      expectDashboardLayout(layout, width);

      // Assumed meals: the athlete has a usual intake, so the rest of today and the next days have some.
      const assumed = timeline.meals.filter((meal) => meal.source === 'assumed');
      expect(assumed.length).toBeGreaterThan(0);
      const fuel = page.locator('section#fuel');
      for (const store of ['Liver', 'Muscle']) {
        const chart = fuel.getByRole('img', { name: new RegExp(`^${store} glycogen in grams`) });
        const markers = chart.locator('[data-meal][data-source="assumed"]');
        expect(await markers.count(), store).toBe(assumed.length);
        expect(await markers.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-at')))).toEqual(
          assumed.map((meal) => meal.at),
        );
        // Drawn as assumed: a dashed line and a hollow head, unlike a logged meal.
        const style = await markers.first().evaluate((node) => ({
          dash: getComputedStyle(node.querySelector('line') as Element).strokeDasharray,
          fill: getComputedStyle(node.querySelector('path') as Element).fill,
        }));
        expect(style.dash).not.toBe('none');
        expect(style.fill).toBe('none');
      }

      // Both rides: the status word REST answers, the store that limits, and the plan's lines.
      for (const [index, ride] of rides.entries()) {
        const rest = fuels[index];
        if (!rest) throw new Error('no fuel answer');
        const card = fuel.locator(`li.plan[data-workout-id="${ride.id}"]`);
        const status = card.locator('.fuel-status');
        expect(await status.getAttribute('data-status'), ride.title ?? '').toBe(rest.status);
        expect(await status.textContent()).toBe(FUEL_STATUS_WORDS[rest.status]);
        expect(await card.locator('.limiting-store').count()).toBe(rest.limitingStore === null ? 0 : 1);
        expect(rest.plan.length).toBeGreaterThan(0);
        const lines = await card
          .locator('.plan-line')
          .evaluateAll((nodes) => nodes.map((node) => (node.textContent ?? '').replace(/\s+/g, ' ').trim()));
        // Each line once under its phase word (the server's text may start with the word itself: not twice).
        const phaseWords = { before: 'Before', during: 'During', after: 'After' } as const;
        expect(lines).toEqual(
          rest.plan.map((line) => {
            const word = `${phaseWords[line.phase]}:`;
            const text = line.text.startsWith(word) ? line.text.slice(word.length).trim() : line.text;
            return `${word} ${text}`.replace(/\s+/g, ' ');
          }),
        );
        for (const line of lines) expect(line).not.toMatch(/^(Before|During|After): \1:/);
        expect(await card.textContent()).not.toContain('No advice');
      }

      // The form panel marks the first 42 days of training, when CTL is still building from 0.
      const firstRide = [...seeded.rides].map((ride) => ride.date).sort()[0] ?? '';
      const building = page.locator('section#training-load rect.building');
      expect(await building.getAttribute('data-building-until')).toBe(addDays(firstRide, 42));

      if (width === 390) expect(layout.height).toBeLessThan(PHONE_HEIGHT_MAX_PX);
      console.info(`realistic dashboard at ${width} px: ${layout.height} px tall`);
      await page.screenshot({ path: `/tmp/realistic-${width}.png`, fullPage: true });
      for (const id of ['recovery-today', 'recommendations', 'fuel', 'training-load', 'recovery-history']) {
        await page.locator(`section#${id}`).screenshot({ path: `/tmp/realistic-${width}-${id}.png` });
      }
    });
  }
});
