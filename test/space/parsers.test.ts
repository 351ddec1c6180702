/**
 * The upstream parsers against fixtures in the real formats (our own made-up
 * data): SOCRATES CSV, NeoWs feed JSON, Launch Library 2 astronauts joined
 * with Open Notify crafts. Quirks: status suffixes on names, quoted fields,
 * string numbers, zone-less UTC times, missing fields, garbage answers.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { joinCrafts, nameKey, parseLl2Astronauts, parseOpenNotify, UNKNOWN_CRAFT } from '../../api/space/events/astronauts';
import { neoFeedUrl, parseNeoFeed } from '../../api/space/events/neows';
import { parseSocratesCsv, splitCsvLine, stripStatusSuffix } from '../../api/space/events/socrates';
import { UpstreamFormatError, utcIso } from '../../api/space/events/types';

const fixture = (name: string) => fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8');

t.test('SOCRATES CSV: rows parsed, suffixes stripped, zone-less TCA read as UTC, closest first', async (t) => {
  const rows = parseSocratesCsv(fixture('socrates-sort-minRange.csv'));
  t.equal(rows.length, 4);
  t.strictSame(rows[0], {
    sat1_name: 'FAKESAT-12',
    sat1_id: 81234,
    sat2_name: 'FAKESAT DEB',
    sat2_id: 82901,
    tca: '2026-11-22T03:14:15.926Z',
    min_range_km: 0.012,
    relative_speed_km_s: 13.524,
    max_probability: 0.001234,
  });
  t.equal(rows[1].sat1_name, 'TESTBIRD 4, BLOCK B', 'a quoted name with a comma stays one field');
  t.equal(rows[1].sat2_name, 'ROCKETBODY R/B');
  t.equal(rows[1].max_probability, 4.4e-5, 'E-notation probability');
  t.equal(rows[2].sat2_name, 'MADE-UP DEBRIS "A"', 'doubled quotes inside quotes');
  t.equal(rows[3].max_probability, 0);
  t.same(
    rows.map((r) => r.min_range_km),
    [0.012, 0.087, 0.451, 1.905],
  );
});

t.test('SOCRATES CSV: garbage, an HTML page and a header-only file', async (t) => {
  t.throws(() => parseSocratesCsv('<html><body>Service Unavailable</body></html>'), UpstreamFormatError);
  t.throws(() => parseSocratesCsv(''), UpstreamFormatError);
  t.throws(() => parseSocratesCsv('NORAD_CAT_ID_1,OBJECT_NAME_1\n1,A'), /missing columns/);
  const header = fixture('socrates-sort-minRange.csv').split('\n')[0];
  t.strictSame(parseSocratesCsv(`${header}\n`), [], 'a table with no conjunction is empty, not an error');
  t.throws(() => parseSocratesCsv(`${header}\nshort,line\n`), /no readable conjunction/);
  // A line with blank IDs and an unreadable TCA is kept with nulls.
  const rows = parseSocratesCsv(`${header}\n,OBJ A [+],,,OBJ B,,not a time,abc,,,\n`);
  t.strictSame(rows[0], { sat1_name: 'OBJ A', sat1_id: null, sat2_name: 'OBJ B', sat2_id: null, tca: null, min_range_km: null, relative_speed_km_s: null, max_probability: null });
});

t.test('CSV helpers', async (t) => {
  t.strictSame(splitCsvLine('a,"b,c",,"d""e"'), ['a', 'b,c', '', 'd"e']);
  t.equal(stripStatusSuffix('ISS (ZARYA) [+]'), 'ISS (ZARYA)');
  t.equal(stripStatusSuffix('NO SUFFIX'), 'NO SUFFIX');
  t.equal(utcIso('2026-09-27 22:46:51.724'), '2026-09-27T22:46:51.724Z');
  t.equal(utcIso('2026-Nov-22 06:45'), '2026-11-22T06:45:00.000Z');
  t.equal(utcIso('2026-11-22'), '2026-11-22T00:00:00.000Z');
  t.equal(utcIso('2026-02-30 01:00'), null, 'a date that does not exist');
  t.equal(utcIso('yesterday'), null);
  t.equal(utcIso(42), null);
});

t.test('NeoWs feed: string numbers, month-name times, hazard flag, soonest first', async (t) => {
  const neos = parseNeoFeed(JSON.parse(fixture('neows-feed.json')));
  t.equal(neos.length, 4);
  t.strictSame(
    neos.map((n) => n.id),
    ['5400003', '5400002', '5400001', '5400004'],
    'by time of closest approach; none last',
  );
  const zz9 = neos.find((n) => n.id === '5400001');
  t.strictSame(zz9, {
    id: '5400001',
    name: '(2026 ZZ9)',
    absolute_magnitude: 22.41,
    estimated_diameter_min_m: 98.1234,
    estimated_diameter_max_m: 219.4201,
    is_potentially_hazardous: true,
    close_approach_date: '2026-11-22',
    close_approach_at: '2026-11-22T06:45:00.000Z',
    relative_velocity_km_s: 17.2231,
    miss_distance_km: 1914843.25,
    miss_distance_lunar: 4.9792,
  });
  const madeupia = neos.find((n) => n.id === '5400003');
  t.equal(madeupia?.absolute_magnitude, 18.2, 'a string magnitude is read');
  t.equal(madeupia?.relative_velocity_km_s, null, 'an unreadable number is null, not NaN');
  t.equal(neos.find((n) => n.id === '5400002')?.name, '(2026 QX1)', 'name trimmed');
  const nodata = neos.find((n) => n.id === '5400004');
  t.equal(nodata?.close_approach_date, null);
  t.equal(nodata?.miss_distance_km, null);
});

t.test('NeoWs feed: garbage is a format error', async (t) => {
  t.throws(() => parseNeoFeed({ error: { code: 'API_KEY_INVALID' } }), UpstreamFormatError);
  t.throws(() => parseNeoFeed([1, 2]), UpstreamFormatError);
  t.throws(() => parseNeoFeed(null), UpstreamFormatError);
  t.strictSame(parseNeoFeed({ near_earth_objects: { '2026-01-01': 'nope', '2026-01-02': [{ no: 'name' }] } }), []);
});

t.test('NeoWs feed URL: seven days at most, the API key', async (t) => {
  const u = new URL(neoFeedUrl('http://fake/neo/rest/v1/feed', 'K', new Date('2026-11-21T23:00:00Z'), 30));
  t.equal(u.searchParams.get('start_date'), '2026-11-21');
  t.equal(u.searchParams.get('end_date'), '2026-11-27');
  t.equal(u.searchParams.get('api_key'), 'K');
});

t.test('LL2 astronauts joined with Open Notify crafts by name', async (t) => {
  const astronauts = parseLl2Astronauts(JSON.parse(fixture('ll2-astronauts.json')));
  t.equal(astronauts.length, 4, 'a record without id is skipped');
  const people = parseOpenNotify(JSON.parse(fixture('open-notify-astros.json')));
  const { astronauts: joined, crafts } = joinCrafts(astronauts, people);
  t.strictSame(joined[0], {
    id: 7001,
    name: 'Jöran Fictus',
    agency: 'Imaginary Space Agency',
    nationality: 'Fictional',
    craft: 'Pretend Station',
    profile_image: 'https://images.example.org/fictus.jpg',
    bio: 'Made-up test astronaut one.',
  });
  t.equal(joined[1].craft, 'Pretend Station', 'a nickname in quotes does not stop the match');
  t.equal(joined[1].agency, 'DSA', 'agency abbreviation when no name');
  t.equal(joined[2].nationality, 'Mockish', 'LL2 2.3 nationality list');
  t.equal(joined[2].profile_image, '');
  t.equal(joined[3].craft, UNKNOWN_CRAFT, 'someone Open Notify does not list');
  t.strictSame(crafts, ['Mock Capsule', 'Pretend Station']);
  t.strictSame(joinCrafts(astronauts, null).crafts, [], 'no crafts without Open Notify');
  t.equal(nameKey('Jöran  "J" Fictus-Smith'), 'joran fictus smith');
});

t.test('astronaut answers that are garbage', async (t) => {
  t.throws(() => parseLl2Astronauts({ detail: 'Request was throttled.' }), UpstreamFormatError);
  t.throws(() => parseOpenNotify({ message: 'success' }), UpstreamFormatError);
  t.strictSame(parseOpenNotify({ people: [{ name: 'A' }, { name: 'B', craft: 'C' }, 7] }), [{ name: 'B', craft: 'C' }]);
});
