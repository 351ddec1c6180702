/**
 * The offline sample is marked as sample wherever it is shown: every name in
 * the event lists, the `source` beside each count, and the daily digest,
 * which does not count the sample as tracked data.
 */
import t from 'tap';
import { ManualClock } from '../../api/space/clock';
import { startService } from '../helpers/space';

t.test('sample records: every shown name starts with SAMPLE and each list says source "sample"', async (t) => {
  const { api } = await startService(t);
  const c = (await api.get('/api/events/conjunctions')).body;
  const n = (await api.get('/api/events/neos')).body;
  const a = (await api.get('/api/events/astronauts')).body;
  t.strictSame([c.source, n.source, a.source], ['sample', 'sample', 'sample']);
  const names: string[] = [
    ...c.conjunctions.flatMap((x: { sat1_name: string; sat2_name: string }) => [x.sat1_name, x.sat2_name]),
    ...n.neos.map((x: { name: string }) => x.name),
    ...a.astronauts.flatMap((x: { name: string; agency: string; craft: string }) => [x.name, x.agency, x.craft]),
    ...a.crafts,
  ];
  t.ok(names.length > 10);
  t.strictSame(
    names.filter((x) => !x.startsWith('SAMPLE')),
    [],
    'no sample name that could pass for a real one',
  );
});

t.test('daily digest: sample data is not counted as tracked; upstream data is', async (t) => {
  const clock = new ManualClock('2026-11-21T07:00:00Z');
  const { api, service } = await startService(t, { clock });
  await api.put('/api/notifications/preferences/global/daily_digest', { schedule_cron: '0 8 * * *' });
  await service.notifier.runDigest(service.events); // starts the count
  clock.advanceMinutes(61);
  const [sampleDigest] = await service.notifier.runDigest(service.events);
  t.match(sampleDigest.entry?.body, /no conjunction data from upstream yet \(4 made-up sample entries shown\)/);
  t.match(sampleDigest.entry?.body, /no near-Earth object data from upstream yet \(3 made-up sample entries shown\)/);
  t.match(sampleDigest.entry?.body, /no crew data from upstream yet \(3 made-up sample entries shown\)/);
  t.notMatch(sampleDigest.entry?.body, /conjunctions tracked|people in space/);
  t.strictSame(JSON.parse(sampleDigest.entry!.data_json), { conjunctions: null, neos: null, hazardous_neos: null, astronauts: null, unread: 0, sample_sources: ['conjunctions', 'neos', 'astronauts'] });

  const now = clock.now();
  service.store.saveSourceData('conjunctions', [{ sat1_name: 'ISS (ZARYA)', sat1_id: 25544, sat2_name: 'FENGYUN 1C DEB', sat2_id: 31141, tca: now.toISOString(), min_range_km: 0.5, relative_speed_km_s: 12, max_probability: 1e-5 }], 'upstream', now);
  clock.advanceMinutes(1440);
  const [mixed] = await service.notifier.runDigest(service.events);
  t.match(mixed.entry?.body, /^1 conjunctions tracked, no near-Earth object data from upstream yet/);
  t.match(JSON.parse(mixed.entry!.data_json), { conjunctions: 1, neos: null, sample_sources: ['neos', 'astronauts'] });
});
