/**
 * The pure parts of TCX/GPX reading (activity-xml.ts, activity-track.ts,
 * activity-file.ts): times, encodings, bounds, the haversine distance and
 * format detection by content.
 */
import { describe, expect, it } from 'vitest';
import { decodeActivityFile, hasFitSignature } from '../../server/src/modules/workouts/activity-file.ts';
import { TrackRecorder, emptyPoint, haversineMeters } from '../../server/src/modules/workouts/activity-track.ts';
import {
  XmlActivityError,
  parseXmlNumber,
  parseXmlTime,
  readXml,
  xmlText,
} from '../../server/src/modules/workouts/activity-xml.ts';
import { oneHourRide } from '../support/fit-fixtures.ts';

const OPTIONS = { maxRecords: 1_000_000 };
const refusalOf = (text: string) => {
  const outcome = decodeActivityFile(new TextEncoder().encode(text), OPTIONS, 'any');
  return outcome.ok ? undefined : outcome.code;
};

describe('haversineMeters', () => {
  it('measures a degree of latitude as 2πR/360 on the mean-radius sphere (R = 6,371,008.8 m)', () => {
    expect(haversineMeters(45, 14, 46, 14)).toBeCloseTo((2 * Math.PI * 6_371_008.8) / 360, 3);
  });

  it('measures a degree of longitude on the equator the same, and nothing between a point and itself', () => {
    expect(haversineMeters(0, 10, 0, 11)).toBeCloseTo((2 * Math.PI * 6_371_008.8) / 360, 3);
    expect(haversineMeters(46.1, 14.5, 46.1, 14.5)).toBe(0);
  });
});

describe('parseXmlTime', () => {
  it('reads a time without a zone as UTC, not as the server clock', () => {
    expect(parseXmlTime('2010-08-05T14:23:59')).toBe(Date.UTC(2010, 7, 5, 14, 23, 59));
    expect(parseXmlTime('2010-08-05T14:23:59Z')).toBe(Date.UTC(2010, 7, 5, 14, 23, 59));
  });

  it('honours an explicit offset and any number of fraction digits', () => {
    expect(parseXmlTime('2010-08-05T16:23:59+02:00')).toBe(Date.UTC(2010, 7, 5, 14, 23, 59));
    expect(parseXmlTime('2022-07-16T16:08:40.2073437Z')).toBe(Date.UTC(2022, 6, 16, 16, 8, 40, 207));
  });

  it('gives NaN for what is not an xsd:dateTime', () => {
    for (const text of ['', 'yesterday', '2010-08-05', '05-AUG-10 16:58:37']) expect(parseXmlTime(text)).toBeNaN();
  });
});

describe('parseXmlNumber', () => {
  it('reads decimals and refuses what Number() would stretch (hex, Infinity, blanks)', () => {
    expect(parseXmlNumber('-12.5e1')).toBe(-125);
    for (const text of ['0x10', 'Infinity', ' ', '', '1e400', '1,5']) expect(parseXmlNumber(text)).toBeNaN();
  });
});

describe('xmlText', () => {
  it('decodes in the encoding the declaration names', () => {
    const latin1 = Uint8Array.from([
      ...new TextEncoder().encode('<?xml version="1.0" encoding="ISO-8859-1"?><gpx creator="Caf'),
      0xe9,
      ...new TextEncoder().encode('"/>'),
    ]);
    expect(xmlText(latin1)).toContain('creator="Café"');
  });

  it('refuses bytes that are not valid UTF-8 as malformed', () => {
    const bad = Uint8Array.from([0x3c, 0x67, 0x70, 0x78, 0xff, 0xfe, 0x3e]);
    expect(() => xmlText(bad)).toThrow(XmlActivityError);
  });
});

describe('readXml', () => {
  const visitor = { open: () => undefined, close: () => undefined };

  it('refuses elements nested deeper than 64 levels', () => {
    const deep = '<a>'.repeat(65) + '</a>'.repeat(65);
    expect(() => readXml(deep, () => visitor)).toThrow(/deeper than 64/);
  });

  it('refuses a DOCTYPE before any entity is declared or expanded', () => {
    const bomb = '<!DOCTYPE gpx [<!ENTITY a "x">]><gpx>&a;</gpx>';
    expect(() => readXml(bomb, () => visitor)).toThrow(/DOCTYPE/);
  });
});

describe('TrackRecorder', () => {
  it('refuses the first point over its limit', () => {
    const points = new TrackRecorder(2);
    points.push(emptyPoint(1));
    points.push(emptyPoint(1));
    expect(() => points.push(emptyPoint(1))).toThrow(
      expect.objectContaining({ code: 'activity_too_many_records' }) as Error,
    );
  });

  it('measures no distance across a segment break, and sorts points into time order', () => {
    const points = new TrackRecorder(10);
    const at = (segment: number, seconds: number, lat: number) => {
      const point = emptyPoint(segment);
      point.timeMs = seconds * 1000;
      point.latitude = lat;
      point.longitude = 0;
      points.push(point);
    };
    at(1, 0, 0);
    at(1, 10, 0.001);
    at(2, 100, 1); // a new segment far away: no distance from the last point
    at(2, 50, 0.0015); // written out of time order
    const { columns } = points.toColumns(0);
    expect(Array.from(columns.t)).toEqual([0, 10, 50, 100]);
    const degree = haversineMeters(0, 0, 1, 0);
    expect(columns.distance[1]).toBeCloseTo(degree * 0.001, 6);
    // File order within segment 2: the point at 100 s, then the one at 50 s 0.9985 degrees back.
    expect(columns.distance[3]).toBeCloseTo(degree * 0.001, 6);
    expect(columns.distance[2]).toBeCloseTo(degree * (0.001 + 0.9985), 3);
  });
});

describe('format detection', () => {
  it('tells FIT by its header, never by anything else', () => {
    expect(hasFitSignature(oneHourRide().bytes)).toBe(true);
    expect(hasFitSignature(new TextEncoder().encode('<gpx>.FIT</gpx>'))).toBe(false);
  });

  it('tells TCX and GPX by the root element, and refuses other XML and non-XML', () => {
    expect(refusalOf('<gpx version="1.1"><rte/></gpx>')).toBe('gpx_no_track');
    expect(refusalOf('<TrainingCenterDatabase/>')).toBe('tcx_no_activity');
    expect(refusalOf('<kml/>')).toBe('activity_format_unknown');
    expect(refusalOf('{"type":"FeatureCollection"}')).toBe('activity_format_unknown');
    expect(refusalOf('')).toBe('activity_file_empty');
  });
});
