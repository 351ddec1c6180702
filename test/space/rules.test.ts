/**
 * The delivery rules as pure functions: quiet hours on the local clock of an
 * IANA zone (windows across midnight, a daylight-saving change), lead-time
 * windows (absolute minutes, across midnight and DST), the altitude floor.
 */
import fc from 'fast-check';
import t from 'tap';
import { belowAltitude, inQuietHours, localMinuteOfDay, openLeadTimes } from '../../api/space/rules';

const q = (quiet_start: string | null, quiet_end: string | null, timezone = 'UTC') => ({ quiet_start, quiet_end, timezone });
const at = (iso: string) => new Date(iso);

t.test('quiet hours within one day', async (t) => {
  const p = q('12:00', '14:00');
  t.equal(inQuietHours(p, at('2026-06-01T11:59:59Z')), false);
  t.equal(inQuietHours(p, at('2026-06-01T12:00:00Z')), true, 'start is inside');
  t.equal(inQuietHours(p, at('2026-06-01T13:59:00Z')), true);
  t.equal(inQuietHours(p, at('2026-06-01T14:00:00Z')), false, 'end is outside');
  t.equal(inQuietHours(q(null, null), at('2026-06-01T13:00:00Z')), false, 'no quiet hours');
  t.equal(inQuietHours(q('08:00', '08:00'), at('2026-06-01T08:00:00Z')), false, 'an empty window');
});

t.test('quiet hours that cross midnight', async (t) => {
  const p = q('22:00', '07:00');
  t.equal(inQuietHours(p, at('2026-06-01T21:59:00Z')), false);
  t.equal(inQuietHours(p, at('2026-06-01T22:00:00Z')), true);
  t.equal(inQuietHours(p, at('2026-06-01T23:59:59Z')), true);
  t.equal(inQuietHours(p, at('2026-06-02T00:00:00Z')), true, 'midnight');
  t.equal(inQuietHours(p, at('2026-06-02T06:59:00Z')), true);
  t.equal(inQuietHours(p, at('2026-06-02T07:00:00Z')), false);
  t.equal(inQuietHours(p, at('2026-06-02T12:00:00Z')), false);
});

t.test('quiet hours are read on the zone\'s wall clock, across a daylight-saving change', async (t) => {
  const berlin = q('22:00', '07:00', 'Europe/Berlin');
  // Summer (CEST, UTC+2): 22:00 local is 20:00Z.
  t.equal(inQuietHours(berlin, at('2026-07-01T19:59:00Z')), false);
  t.equal(inQuietHours(berlin, at('2026-07-01T20:00:00Z')), true);
  t.equal(inQuietHours(berlin, at('2026-07-02T04:59:00Z')), true);
  t.equal(inQuietHours(berlin, at('2026-07-02T05:00:00Z')), false, '07:00 CEST');
  // The night of 24-25 October 2026 the clocks go back (03:00 CEST -> 02:00 CET): the window ends at 07:00 CET = 06:00Z.
  t.equal(inQuietHours(berlin, at('2026-10-24T20:00:00Z')), true, '22:00 CEST');
  t.equal(inQuietHours(berlin, at('2026-10-25T05:30:00Z')), true, '06:30 CET, still quiet after the change');
  t.equal(inQuietHours(berlin, at('2026-10-25T06:00:00Z')), false, '07:00 CET');
  // New York springs forward on 8 March 2026 (02:00 EST -> 03:00 EDT).
  const ny = q('01:00', '03:30', 'America/New_York');
  t.equal(inQuietHours(ny, at('2026-03-08T06:30:00Z')), true, '01:30 EST');
  t.equal(inQuietHours(ny, at('2026-03-08T07:15:00Z')), true, '03:15 EDT (02:xx does not exist that night)');
  t.equal(inQuietHours(ny, at('2026-03-08T07:30:00Z')), false, '03:30 EDT');
  // A zone east of UTC whose local midnight is the previous UTC day.
  const tokyo = q('23:00', '01:00', 'Asia/Tokyo');
  t.equal(inQuietHours(tokyo, at('2026-06-01T14:30:00Z')), true, '23:30 JST');
  t.equal(inQuietHours(tokyo, at('2026-06-01T15:30:00Z')), true, '00:30 JST');
  t.equal(inQuietHours(tokyo, at('2026-06-01T16:00:00Z')), false, '01:00 JST');
});

t.test('a window across midnight is exactly the complement of the reversed one', async (t) => {
  const hhmm = fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 })).map(([h, m]) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`);
  fc.assert(
    fc.property(hhmm, hhmm, fc.integer({ min: 0, max: 86_400_000 * 400 }), fc.constantFrom('UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kathmandu'), (a, b, offsetMs, tz) => {
      fc.pre(a !== b);
      const t0 = new Date(Date.UTC(2026, 0, 1) + offsetMs);
      return inQuietHours(q(a, b, tz), t0) === !inQuietHours(q(b, a, tz), t0);
    }),
  );
  t.pass('property held');
});

t.test('local minute of day in zones with odd offsets', async (t) => {
  t.equal(localMinuteOfDay(at('2026-06-01T00:00:00Z'), 'Asia/Kathmandu'), 5 * 60 + 45);
  t.equal(localMinuteOfDay(at('2026-06-01T00:00:00Z'), 'America/St_Johns'), 21 * 60 - 30 + 60, '20:30 NDT');
  t.equal(localMinuteOfDay(at('2026-06-01T23:59:00Z'), 'UTC'), 23 * 60 + 59);
});

t.test('lead times: windows before the event, most imminent last, none once it has passed', async (t) => {
  const event = at('2026-06-02T00:30:00Z'); // just after midnight
  t.strictSame(openLeadTimes(event, [60, 1440], at('2026-05-31T00:29:00Z')), [], 'more than a day before');
  t.strictSame(openLeadTimes(event, [60, 1440], at('2026-06-01T00:30:00Z')), [1440], 'exactly a day before');
  t.strictSame(openLeadTimes(event, [60, 1440], at('2026-06-01T23:29:59Z')), [1440], 'across midnight, 61 min before');
  t.strictSame(openLeadTimes(event, [60, 1440], at('2026-06-01T23:30:00Z')), [1440, 60]);
  t.strictSame(openLeadTimes(event, [1440, 60], at('2026-06-02T00:29:00Z')), [1440, 60], 'sorted whatever the order given');
  t.strictSame(openLeadTimes(event, [60, 1440], at('2026-06-02T00:30:00Z')), [], 'at the event');
  t.strictSame(openLeadTimes(event, [60], at('2026-06-02T01:00:00Z')), [], 'after it');
});

t.test('lead times count real minutes across a daylight-saving change', async (t) => {
  // 06:00 Berlin time on 25 Oct 2026 (CET) is 05:00Z; 6 hours before is 23:00Z on the 24th (01:00 CEST), seven local hours earlier.
  const event = at('2026-10-25T05:00:00Z');
  t.strictSame(openLeadTimes(event, [360], at('2026-10-24T22:59:00Z')), []);
  t.strictSame(openLeadTimes(event, [360], at('2026-10-24T23:00:00Z')), [360]);
});

t.test('altitude floor for passes', async (t) => {
  t.equal(belowAltitude({ min_altitude: 10 }, 9.99), true);
  t.equal(belowAltitude({ min_altitude: 10 }, 10), false);
  t.equal(belowAltitude({ min_altitude: 0 }, 0), false);
  t.equal(belowAltitude({ min_altitude: 30 }, undefined), false, 'no altitude given: not filtered');
});
