/**
 * Keeps the space-event cache (SQLite, table event_sources) fresh.
 *
 * A refresh asks each upstream once: SOCRATES for conjunctions, NeoWs for
 * NEOs, Launch Library 2 for astronauts with Open Notify for their crafts.
 * Only one refresh runs at a time: asking while one runs joins it. A source
 * that fails keeps its last good data and records the error; a 429 records
 * the upstream's Retry-After and the source is not asked again before then;
 * nor is any source asked twice within `minIntervalSec`, so that repeated
 * refresh requests cannot run through an upstream's rate limit.
 * A source whose cache is still empty after its upstream failed gets the
 * offline sample data (origin "sample"), which the next good answer replaces.
 */
import type { Clock } from '../clock';
import type { CacheOrigin, SourceState, Store } from '../store';
import { joinCrafts, parseLl2Astronauts, parseOpenNotify } from './astronauts';
import { neoFeedUrl, parseNeoFeed } from './neows';
import { sampleAstronauts, sampleConjunctions, sampleNeos } from './sample-data';
import { parseSocratesStream } from './socrates';
import type { AstronautData, Conjunction, Neo } from './types';
import { fetchJson, fetchTextChunks, UpstreamThrottledError, type FetchOptions } from './upstream';

export interface UpstreamConfig {
  socratesUrl: string;
  neowsUrl: string;
  nasaApiKey: string;
  ll2AstronautsUrl: string;
  openNotifyUrl: string;
  timeoutMs: number;
  maxBytes: number;
  /** A source is not asked again sooner than this after its last attempt (however many refreshes are requested). */
  minIntervalSec: number;
}

export const DEFAULT_UPSTREAMS: UpstreamConfig = {
  socratesUrl: 'https://celestrak.org/SOCRATES/sort-minRange.csv',
  neowsUrl: 'https://api.nasa.gov/neo/rest/v1/feed',
  nasaApiKey: 'DEMO_KEY',
  ll2AstronautsUrl: 'https://ll.thespacedevs.com/2.2.0/astronaut/?in_space=true&limit=100',
  openNotifyUrl: 'http://api.open-notify.org/astros.json',
  timeoutMs: 15_000,
  maxBytes: 20 * 1024 * 1024,
  // At most 12 calls an hour per source: under Launch Library 2's free tier (about 15) and NeoWs DEMO_KEY's 30.
  minIntervalSec: 300,
};

export const SOURCES = ['conjunctions', 'neos', 'astronauts', 'crafts'] as const;
export type SourceName = (typeof SOURCES)[number];

type People = Array<{ name: string; craft: string }>;

export interface SourceReport {
  source: SourceName;
  outcome: 'updated' | 'failed' | 'throttled' | 'skipped';
  count?: number;
  error?: string;
}

export interface RefreshReport {
  started_at: string;
  finished_at: string;
  sources: SourceReport[];
}

export interface SourceStatus {
  source: SourceName;
  origin: CacheOrigin | null;
  fetched_at: string | null;
  last_attempt_at: string | null;
  last_error: string | null;
  retry_not_before: string | null;
}

export class EventRefresher {
  private current: Promise<RefreshReport> | null = null;
  private lastReport: RefreshReport | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly upstream: UpstreamConfig,
    /** Called after each refresh (the notifier raises event notifications here). */
    private readonly onRefreshed: (report: RefreshReport) => void | Promise<void> = () => {},
  ) {}

  get running(): boolean {
    return this.current !== null;
  }

  get lastRefresh(): RefreshReport | null {
    return this.lastReport;
  }

  /** Starts a refresh, or joins the one running; `started` says which. */
  refresh(): { started: boolean; done: Promise<RefreshReport> } {
    if (this.current) return { started: false, done: this.current };
    const done = this.run().finally(() => {
      this.current = null;
    });
    this.current = done;
    return { started: true, done };
  }

  /** Resolves when no refresh is running (never starts one). */
  async whenIdle(): Promise<void> {
    await this.current?.catch(() => {});
  }

  conjunctions(): SourceState<Conjunction[]> {
    return this.store.source<Conjunction[]>('conjunctions');
  }

  neos(): SourceState<Neo[]> {
    return this.store.source<Neo[]>('neos');
  }

  astronauts(): SourceState<AstronautData> {
    return this.store.source<AstronautData>('astronauts');
  }

  status(): SourceStatus[] {
    return SOURCES.map((source) => {
      const { data: _data, ...rest } = this.store.source(source);
      return { source, ...rest };
    });
  }

  private fetchOptions(): FetchOptions {
    return { timeoutMs: this.upstream.timeoutMs, maxBytes: this.upstream.maxBytes, now: this.clock.now() };
  }

  /** Asks one upstream unless it asked us to wait; saves good data, records failures. */
  private async refreshSource<T>(source: SourceName, load: () => Promise<T>, count: (d: T) => number): Promise<SourceReport> {
    const now = this.clock.now();
    const { retry_not_before, last_attempt_at } = this.store.source(source);
    if (retry_not_before && Date.parse(retry_not_before) > now.getTime()) {
      return { source, outcome: 'skipped', error: `upstream asked us to wait until ${retry_not_before}` };
    }
    const nextAllowedMs = last_attempt_at === null ? 0 : Date.parse(last_attempt_at) + this.upstream.minIntervalSec * 1000;
    if (nextAllowedMs > now.getTime()) {
      return { source, outcome: 'skipped', error: `asked at ${last_attempt_at}; not again before ${new Date(nextAllowedMs).toISOString()} (UPSTREAM_MIN_INTERVAL_SECONDS)` };
    }
    try {
      const data = await load();
      this.store.saveSourceData(source, data, 'upstream', this.clock.now());
      return { source, outcome: 'updated', count: count(data) };
    } catch (e) {
      const err = e as Error;
      const retryAt = err instanceof UpstreamThrottledError ? err.retryAt : null;
      this.store.saveSourceFailure(source, err.message, this.clock.now(), retryAt);
      return { source, outcome: retryAt ? 'throttled' : 'failed', error: err.message };
    }
  }

  private async run(): Promise<RefreshReport> {
    const started = this.clock.now();
    const u = this.upstream;
    const [conj, neos, crafts] = await Promise.all([
      // Streamed: the real file is about 13 MB (120,000 rows); read whole and parsed at once it held the event loop for seconds.
      this.refreshSource('conjunctions', () => parseSocratesStream(fetchTextChunks(u.socratesUrl, this.fetchOptions())), (d) => d.length),
      this.refreshSource('neos', async () => parseNeoFeed(await fetchJson(neoFeedUrl(u.neowsUrl, u.nasaApiKey, this.clock.now()), this.fetchOptions())), (d) => d.length),
      this.refreshSource('crafts', async () => parseOpenNotify(await fetchJson(u.openNotifyUrl, this.fetchOptions())), (d: People) => d.length),
    ]);
    // Crafts come from Open Notify: the fresh answer, else the last good one.
    const people = this.store.source<People>('crafts').data;
    const astro = await this.refreshSource(
      'astronauts',
      async () => joinCrafts(parseLl2Astronauts(await fetchJson(u.ll2AstronautsUrl, this.fetchOptions())), people),
      (d) => d.astronauts.length,
    );
    this.loadSamplesWhereEmpty();
    const report: RefreshReport = { started_at: started.toISOString(), finished_at: this.clock.now().toISOString(), sources: [conj, neos, astro, crafts] };
    this.lastReport = report;
    await this.onRefreshed(report);
    return report;
  }

  /** Whether a source has no upstream data, or none fetched within `maxAgeMin` minutes. */
  stale(maxAgeMin: number): boolean {
    const now = this.clock.now().getTime();
    return (['conjunctions', 'neos', 'astronauts'] as const).some((name) => {
      const s = this.store.source(name);
      return s.data === null || s.origin !== 'upstream' || s.fetched_at === null || (maxAgeMin > 0 && now - Date.parse(s.fetched_at) > maxAgeMin * 60_000);
    });
  }

  /** Fills each empty cache with the offline sample. */
  loadSamplesWhereEmpty(): void {
    const now = this.clock.now();
    if (this.store.source('conjunctions').data === null) this.store.saveSourceData('conjunctions', sampleConjunctions(now), 'sample', now);
    if (this.store.source('neos').data === null) this.store.saveSourceData('neos', sampleNeos(now), 'sample', now);
    if (this.store.source('astronauts').data === null) this.store.saveSourceData('astronauts', sampleAstronauts(), 'sample', now);
  }
}
