/**
 * Every constant of the glycogen model, each declared once with where it comes
 * from. The model itself is described in glycogen.model.ts. Changing a value
 * here changes the worked examples in test/unit/glycogen-examples.test.ts,
 * which must be updated with it.
 */
import type { ABSORPTION_TYPES } from '@pacer/contract';

/**
 * How fast an item's carbohydrate is released, as the nutrition contract
 * spells it (the contract exports the values, not a type).
 */
export type AbsorptionType = (typeof ABSORPTION_TYPES)[number];

// ---------------------------------------------------------------- capacities

/**
 * Liver glycogen ceiling, grams. A fed adult's liver holds roughly 90–160 g
 * (Gonzalez et al. 2016, Am J Physiol Endocrinol Metab 311:E543); 100 g is a
 * deliberately conservative value near the low middle of that range.
 */
export const LIVER_MAX_G = 100;

/**
 * Muscle glycogen ceiling per kilogram of body mass. Muscle carries most of
 * the body's 300–700 g of glycogen (Areta & Hopkins 2018, Sports Med 48:2091);
 * 6 g/kg gives 420 g for a 70 kg athlete, inside that range.
 */
export const MUSCLE_MAX_G_PER_KG = 6;

/**
 * Body mass used when neither the profile nor a wellness entry has a weight.
 * The usual reference adult of physiology texts; the service lists it in the
 * response's assumptions whenever it is used.
 */
export const DEFAULT_BODY_MASS_KG = 70;

/**
 * Fraction of each store's ceiling assumed at the very first step of a
 * user's chain (a week before the first requested day). A trained, normally
 * fed athlete is rarely either full or empty; a week of simulation then
 * replaces the guess with the athlete's own logs.
 */
export const START_FILL_FRACTION = 0.8;

// ---------------------------------------------------------------- time grid

/** Length of one simulation step, minutes: fine enough for a gel's 15-minute peak. */
export const STEP_MINUTES = 15;
export const STEP_MS = STEP_MINUTES * 60_000;
/** Steps per hour, for converting hourly rates into per-step grams. */
export const STEPS_PER_HOUR = 60 / STEP_MINUTES;

// ---------------------------------------------------------------- uptake

/**
 * Most carbohydrate the gut can pass to the blood in one step: 22.5 g per
 * 15 min is 90 g/h, the ceiling for mixed transportable carbohydrates
 * (glucose plus fructose) reported by Jeukendrup 2014, Sports Med 44 Suppl
 * 1:S25. Released carbohydrate beyond it waits in the gut pool.
 */
export const UPTAKE_CAP_PER_STEP_G = 22.5;

// ---------------------------------------------------------------- floors

/**
 * Lowest muscle glycogen, as a fraction of M_max: 25 %, 105 g at 70 kg.
 * Working muscle at exhaustion after prolonged hard cycling still holds some
 * glycogen (Hermansen, Hultman & Saltin 1967, Acta Physiol Scand 71:129), and
 * the model's muscle store is the whole body's: the muscles that do not work
 * (about half the muscle mass in cycling) keep theirs and cannot pass it on.
 * Exercise demand muscle cannot meet above it is a deficit.
 */
export const MUSCLE_FLOOR_FRACTION = 0.25;

// ---------------------------------------------------------------- resting use

/**
 * Fed-state resting carbohydrate use per step: 2.5 g, that is 10 g/h. The
 * brain alone uses about 120 g of glucose a day, 5 g/h (Cahill 2006, Annu Rev
 * Nutr 26:1); whole-body glucose production after an overnight fast is about
 * 2 mg/kg/min, 8.4 g/h at 70 kg (Wahren & Ekberg 2007, Annu Rev Nutr 27:329),
 * and use rises after a meal; 10 g/h is the middle of the 8–12 g/h these
 * give. Not scaled by body mass: the brain's share does not grow with it.
 * Absorbed carbohydrate covers it first; only the rest is stored.
 */
export const RESTING_USE_PER_STEP_G = 2.5;

/**
 * Most net liver glycogen given per resting step towards the resting use
 * uptake leaves uncovered: 1.125 g, 4.5 g/h; gluconeogenesis and the lower
 * fasted glucose use account for the rest. Liver glycogen falls by about half
 * overnight (Nilsson & Hultman 1973, Scand J Clin Lab Invest 32:325); net
 * hepatic glycogenolysis over the first 22 h of a fast averages about
 * 4.3 µmol/kg/min, 3.3 g/h at 70 kg, with gluconeogenesis about 60 % of glucose
 * production (Rothman et al. 1991, Science 254:573); after a mixed meal the
 * liver's glycogen is back to its pre-meal level within about 10 h (Taylor et
 * al. 1996, J Clin Invest 97:126). 4.5 g/h takes a full liver to 55 g over a
 * 10-hour night (−45 %).
 */
export const RESTING_LIVER_OUTPUT_PER_STEP_G = 1.125;

// ---------------------------------------------------------------- absorption

/** Minutes after eating at which the release rate starts, peaks and ends. */
export interface AbsorptionProfile {
  readonly lagMin: number;
  readonly peakMin: number;
  readonly endMin: number;
}

/**
 * Triangular release profile per absorption type (minutes from `logged_at`).
 * Model defaults chosen to match the usual gastric-emptying and glycaemic
 * response order of these food classes: liquid glucose appears in the blood
 * within minutes and is mostly through within the hour, a mixed meal takes
 * around three hours, and fat, protein or fibre slow emptying further
 * (Jeukendrup 2014 for sports drinks and gels; the slower rows are the
 * model's own graded choices, not measurements).
 */
export const ABSORPTION_PROFILES: Readonly<Record<AbsorptionType, AbsorptionProfile>> = {
  // Gels, sports drinks, glucose.
  RAPID: { lagMin: 0, peakMin: 15, endMin: 60 },
  // White bread, rice cakes, banana.
  FAST: { lagMin: 0, peakMin: 30, endMin: 90 },
  // A mixed meal; the default when an item names no type.
  BALANCED: { lagMin: 15, peakMin: 60, endMin: 180 },
  // High fat, protein or fibre.
  DENSE: { lagMin: 30, peakMin: 90, endMin: 300 },
  // A very large carbohydrate meal.
  HYPER_LOAD: { lagMin: 30, peakMin: 120, endMin: 360 },
};

// ---------------------------------------------------------------- exercise energy

/**
 * Metabolic kcal per hour for each watt of mechanical power. One watt for an
 * hour is 3.6 kJ of work; at the ~24 % gross efficiency of trained cycling
 * that costs 3.6 / 0.24 = 15 kJ = 3.59 kcal of metabolic energy. Hence the
 * riders' rule "kJ of work ≈ kcal burned", and kcal/h = 3.6 × W.
 */
export const METABOLIC_KCAL_PER_HOUR_PER_WATT = 3.6;

/** Energy per gram of carbohydrate, kcal (Atwater factor). */
export const KCAL_PER_G_CARBOHYDRATE = 4;

/**
 * Fraction of exercise energy that comes from carbohydrate as a function of
 * intensity factor, as (IF, share) points joined by straight lines and held
 * at 1.0 above the last one. Carbohydrate's share rises with intensity, from
 * about a fifth at rest-like effort to essentially all of it above threshold
 * (Romijn et al. 1993, Am J Physiol 265:E380; van Loon et al. 2001, J Physiol
 * 536:295). Straight lines between points keep the drain continuous in IF.
 */
export const CARBOHYDRATE_SHARE_POINTS: readonly (readonly [intensityFactor: number, share: number])[] = [
  [0, 0.2],
  [0.5, 0.45],
  [0.75, 0.65],
  [0.9, 0.85],
  [1.05, 1.0],
];

/**
 * FTP assumed when the profile has none: 3.0 W per kg of body mass, a
 * moderately trained recreational rider in Coggan's power-profile chart (Allen &
 * Coggan 2010). The service lists it in the assumptions when it is used.
 */
export const DEFAULT_FTP_WATTS_PER_KG = 3.0;

/**
 * Intensity factor of a typical session of each sport when nothing more
 * specific (power, heart rate, a planned structure or a planned stress) is
 * known. These are the model's defaults for steady endurance work, placed in
 * Coggan's intensity levels (Allen & Coggan 2010): riding and skiing
 * in the middle of the endurance level (56–75 % of FTP), running nearer its
 * top because easy runs are harder relative to threshold, swimming and rowing
 * between the two, walking and hiking in active recovery, and strength, yoga
 * and other sessions low because much of their time is rest. The same values
 * serve the training-stress estimate.
 */
export { SPORT_INTENSITY as SPORT_INTENSITY_FACTORS } from './training-load.model.ts';

/**
 * Intensity factor of a planned step whose target is a heart-rate zone, zones
 * 1–5 taken as Coggan's power levels 1–5 (Allen & Coggan 2010:
 * active recovery < 55 %, endurance 56–75 %, tempo 76–90 %, threshold
 * 91–105 %, VO2max 106–120 % of FTP). Each value sits near the middle of its
 * level, on the low side for zones 4 and 5 because heart rate lags and a
 * zone held by heart rate is usually ridden at the level's lower half; zone 1
 * takes the top of its open-ended level, as a warm-up or recovery step is
 * rarely below it.
 */
export const HEART_RATE_ZONE_INTENSITY_FACTORS: Readonly<Record<1 | 2 | 3 | 4 | 5, number>> = {
  1: 0.55,
  2: 0.7,
  3: 0.82,
  4: 0.95,
  5: 1.1,
};

// ---------------------------------------------------------------- muscle glycogen synthesis

/**
 * Skeletal muscle mass as a fraction of body mass: 0.4. Whole-body MRI puts it
 * at about 38 % of body mass in men and 31 % in women (Janssen et al. 2000,
 * J Appl Physiol 89:81), trained endurance athletes towards the top; 0.4 is
 * the model's round value, 28 kg at 70 kg.
 */
export const MUSCLE_MASS_FRACTION = 0.4;

/** Grams per mmol of glucosyl units (C6H10O5, 162 g/mol): how glycogen measured in mmol becomes grams. */
export const GLUCOSYL_G_PER_MMOL = 0.162;

/**
 * Fastest muscle glycogen synthesis, mmol glucosyl units per kg wet muscle
 * per hour. After exercise, with 1.0–1.2 g/kg/h of carbohydrate or more,
 * synthesis runs at about 5–10 mmol/kg ww/h, rarely more; with less intake or
 * intake delayed, lower (Jentjens & Jeukendrup 2003, Sports Med 33:117; Ivy et
 * al. 1988, J Appl Physiol 64:1480: about 7.7 in the first 2 h with
 * carbohydrate at once, half that when it was delayed 2 h; Ivy et al. 1988,
 * J Appl Physiol 65:2018: 1.5 g/kg every 2 h gave about 5–6 over 4 h, and
 * twice the intake no more). 8 is the model's choice, near Ivy's 7.7 and
 * inside the range; it binds only when uptake offers muscle more, as after a
 * large meal. Restoring the muscle after depleting exercise takes about 24 h
 * even with 525–648 g of carbohydrate a day (Costill et al. 1981, Am J Clin
 * Nutr 34:1831), which this rate with the taper below gives for meals spread
 * over the day (docs/science.md §3).
 */
export const MUSCLE_SYNTHESIS_MMOL_PER_KG_WW_PER_H = 8;

/**
 * The fastest synthesis as a fraction of M_max per hour:
 * 8 mmol/kg/h × 0.162 g/mmol × 0.4 kg muscle per kg body ÷ 6 g/kg of M_max
 * = 0.0864 (8.64 %/h; 0.5184 g per kg body mass an hour, 36.288 g/h or
 * 9.072 g a step at 70 kg). Scales with body mass through M_max.
 */
export const MUSCLE_SYNTHESIS_MAX_FRACTION_PER_H =
  (MUSCLE_SYNTHESIS_MMOL_PER_KG_WW_PER_H * GLUCOSYL_G_PER_MMOL * MUSCLE_MASS_FRACTION) / MUSCLE_MAX_G_PER_KG;

/**
 * Fill, fraction of M_max, above which synthesis slows: from this fill the
 * rate falls in a straight line to 0 at M_max. Glycogen inhibits its own
 * synthesis: glycogen synthase activity falls as the muscle's glycogen rises
 * (Danforth 1965, J Biol Chem 240:588), and resynthesis after exercise is
 * fastest when the muscle is most depleted (Zachwieja et al. 1991, Med Sci
 * Sports Exerc 23:44). 70 % is the model's choice: below it the rate is the
 * fastest, above it the muscle is fuelled for a typical session and refills
 * more slowly. The straight line keeps the rate continuous, and its slope
 * (0.072 of the gap to M_max a step) is far below 1, so M plus what it may take
 * in a step never falls as M rises: more food never lowers a later level.
 */
export const MUSCLE_SYNTHESIS_TAPER_FROM_FRACTION = 0.7;

// ---------------------------------------------------------------- splits between stores

/**
 * Share of stored uptake sent to the liver; the rest goes to muscle. After a
 * mixed meal the liver lays down a minority of the carbohydrate as glycogen
 * and muscle most of the rest (Taylor et al. 1996, J Clin Invest 97:126,
 * measured liver glycogen directly by 13C-NMR); 30/70 is the model's round
 * split in that direction, not a measured ratio.
 */
export const STORAGE_LIVER_SHARE = 0.3;

/**
 * Share of exercise carbohydrate that is blood glucose from the liver; the
 * rest is the working muscles' own glycogen. At moderate and high intensity
 * muscle glycogen supplies most of the carbohydrate oxidised and plasma
 * glucose the smaller part (Romijn et al. 1993, Am J Physiol 265:E380); 75/25
 * is the model's round split. Carbohydrate absorbed during exercise replaces
 * the liver's part first (Jeukendrup et al. 1999, Am J Physiol 276:E672:
 * ingested glucose can suppress the liver's output completely; Coyle et al.
 * 1986, J Appl Physiol 61:165: feeding keeps blood glucose up while muscle
 * glycogen use is unchanged). A liver that runs out is the bonk: its share is
 * never moved to muscle.
 */
export const EXERCISE_LIVER_SHARE = 0.25;

/**
 * Share of the carbohydrate absorbed during exercise beyond the liver's part
 * that spares muscle glycogen; the rest is oxidised in place of fat. Studies
 * disagree on muscle sparing in cycling: none measurable in Coyle et al. 1986
 * (J Appl Physiol 61:165), 38–57 % less use in type I and II fibres in the
 * first hour with 0.7 g/kg/h of glucose in Stellingwerff et al. 2007 (Pflügers
 * Arch 454:635). 0.5 is the model's middle: food spares the liver first and
 * muscle only in part, never 1:1.
 */
export const EXERCISE_MUSCLE_SPARING_SHARE = 0.5;

// ---------------------------------------------------------------- fuel status

/**
 * Liver glycogen, grams, below which a planned workout is at risk: blood
 * glucose depends on the liver, and cyclists fatigue when it runs out and
 * blood glucose falls (Coyle et al. 1986, J Appl Physiol 61:165). 20 g, a fifth
 * of L_max, is the model's margin above empty.
 */
export const LIVER_RISK_G = 20;

/**
 * Muscle glycogen at the start, percent of M_max, from which a planned
 * workout is fully fuelled. Model threshold: above it muscle glycogen is not
 * what limits a typical session.
 */
export const READY_MUSCLE_START_PERCENT = 70;

/** Below this percent of M_max at the start, a planned workout is at risk even before it drains anything. */
export const AT_RISK_MUSCLE_START_PERCENT = 50;

// ---------------------------------------------------------------- fuel advice

/**
 * Workouts longer than this many minutes get before, during and after advice
 * whatever the stores say. Carbohydrate during exercise helps performance
 * from about an hour on, 30–60 g/h for 1–2.5 h (Jeukendrup 2014, Sports Med 44
 * Suppl 1:S25; Thomas, Erdman & Burke 2016, Med Sci Sports Exerc 48:543);
 * 75 min is where Jeukendrup 2014 moves from a mouth rinse (45–75 min) to
 * eating and drinking carbohydrate.
 */
export const LONG_WORKOUT_MIN = 75;

/** From this duration, minutes (2.5 h), the guideline rate goes past 60 g/h, up to 90 g/h (Jeukendrup 2014). */
export const VERY_LONG_WORKOUT_MIN = 150;

/**
 * Intensity factors where the guideline rate steps up: below the first easy
 * endurance, up to the second endurance to low tempo, from the second tempo
 * and harder (Coggan's levels, Allen & Coggan 2010), where carbohydrate is
 * most of the fuel (CARBOHYDRATE_SHARE_POINTS: 0.57 at IF 0.65, 0.72 at 0.80).
 */
export const ADVICE_INTENSITY_STEPS = [0.65, 0.8] as const;

/**
 * Guideline in-ride carbohydrate, g/h, by duration (up to 2.5 h, beyond) and
 * by the intensity bands of ADVICE_INTENSITY_STEPS: 30–60 g/h for 1–2.5 h, up
 * to 90 g/h beyond 2.5 h (Jeukendrup 2014; Thomas et al. 2016). The harder the
 * session, the higher in the range. docs/science.md §3 has the table.
 */
export const DURING_GUIDELINE_G_PER_H: Readonly<Record<'upTo150' | 'beyond150', readonly [number, number, number]>> = {
  upTo150: [30, 45, 60],
  beyond150: [60, 75, 90],
};

/**
 * Highest in-ride rate the advice raises to when a store runs short, g/h:
 * the top of each duration's guideline range (Jeukendrup 2014).
 */
export const DURING_CEILING_G_PER_H: Readonly<Record<'upTo150' | 'beyond150', number>> = {
  upTo150: 60,
  beyond150: 90,
};

/**
 * Above this rate, g/h, in-ride carbohydrate should be glucose + fructose
 * (multiple transportable carbohydrates): glucose alone is absorbed at about
 * 60 g/h, the two together at up to 90 g/h (Jeukendrup 2014).
 */
export const SINGLE_SUGAR_MAX_G_PER_H = 60;

/** Minutes between in-ride items, and the minute of the first: little and often, starting within 15–30 min. */
export const DURING_INTERVAL_MIN = 20;

/** Carbohydrate in a sports drink, g per 100 ml: the 6–8 % of common drinks, its low end (Jeukendrup 2014). */
export const SPORTS_DRINK_G_PER_100_ML = 6;

/**
 * Pre-workout carbohydrate, g/kg body mass: 1–4 g/kg 1–4 h before exercise
 * longer than an hour (Thomas et al. 2016; Burke et al. 2011, J Sports Sci 29
 * Suppl 1:S17). The model's choice within that range: 1 g/kg up to 2.5 h,
 * 2 g/kg beyond, `hardExtra` more from IF 0.80 (ADVICE_INTENSITY_STEPS[1]).
 */
export const PRE_WORKOUT_G_PER_KG = { upTo150: 1, beyond150: 2, hardExtra: 0.5 } as const;

/**
 * Hours before the start: what the model's meals give in the last
 * `window` hours counts; a pre-workout meal is placed `meal` hours ahead,
 * BALANCED when at least `balancedFrom` hours are left, FAST below, and none
 * below `least`; a top-up `topUp` hours ahead. The amount is never more g/kg
 * than the hours left (1 g/kg an hour before, 4 g/kg four hours before:
 * Burke et al. 2011).
 */
export const PRE_WORKOUT_HOURS = { window: 4, meal: 3, balancedFrom: 2, least: 1, topUp: 1 } as const;

/**
 * Recovery intake, g/kg/h, for the first `hours` hours after a hard or long
 * session when the next is within `nextWithinH` hours: 1–1.2 g/kg/h (Burke et
 * al. 2011, rapid refuelling).
 */
export const RECOVERY_INTAKE = { lowGPerKgPerH: 1, highGPerKgPerH: 1.2, hours: 4, nextWithinH: 8 } as const;

/** A workout this hard (IF) gets the recovery line whatever its length: threshold and harder sessions. */
export const RECOVERY_LINE_FROM_IF = 0.85;
