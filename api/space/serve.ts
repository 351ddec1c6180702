/**
 * The service assembled and listening: database, push sender, notifier,
 * event refresher, live feed and the timers that drive them (an event
 * refresh every `refreshMinutes`, a delivery tick every `tickSeconds` for
 * lead times and the digest, and maintenance every `maintenanceSeconds`:
 * log retention and a WAL checkpoint). At start an empty or stale event cache is
 * refreshed from the upstreams; what stays empty gets the offline sample.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerClientErrorsWithJson, buildSpaceHandler } from './app';
import { systemClock, type Clock, type Sleep } from './clock';
import type { SpaceConfig } from './config';
import { checkpoint, openDatabase, type Db } from './db';
import { Notifier } from './delivery';
import { EventRefresher } from './events/refresher';
import { PushSender } from './push';
import { Store, type PruneResult } from './store';
import { LiveFeed } from './ws-feed';

export interface ServiceOptions {
  clock?: Clock;
  /** Waits between push retries (tests shorten them). */
  sleep?: Sleep;
  /** Start the refresh and tick timers (default true; tests drive them by hand). */
  timers?: boolean;
  log?: (line: string) => void;
}

export interface SpaceService {
  url: string;
  server: http.Server;
  db: Db;
  store: Store;
  notifier: Notifier;
  events: EventRefresher;
  feed: LiveFeed;
  /** The refresh started at start-up (resolved at once when the cache already had data). */
  initialRefresh: Promise<unknown>;
  /** One delivery tick now (what the timer does every tickSeconds). */
  tick(): Promise<void>;
  /** One maintenance run now (what the timer does every maintenanceSeconds): retention, then a WAL checkpoint. */
  maintain(): MaintenanceReport;
  close(): Promise<void>;
}

export interface MaintenanceReport {
  pruned: PruneResult;
  checkpoint: ReturnType<typeof checkpoint>;
}

/** Event notification keys are kept this long: far longer than upstream data looks ahead (a week), so their events have passed. */
export const EVENT_KEY_RETENTION_DAYS = 30;

/** Log retention (0 days: none) and event-key retention by the clock, then a WAL checkpoint that truncates the log file. */
export function maintainDatabase(db: Db, store: Store, now: Date, retentionDays: number): MaintenanceReport {
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000);
  const pruned = store.pruneBefore(retentionDays > 0 ? daysAgo(retentionDays) : null, daysAgo(EVENT_KEY_RETENTION_DAYS));
  return { pruned, checkpoint: checkpoint(db) };
}

export async function startSpaceService(config: SpaceConfig, opts: ServiceOptions = {}): Promise<SpaceService> {
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? (() => {});
  const db = openDatabase(config.databasePath);
  const store = new Store(db);
  const feed = new LiveFeed(() => store.unreadCount(), config.corsOrigins);
  const push = new PushSender(config.vapid, store, clock, config.push, opts.sleep);
  const notifier = new Notifier(store, push, clock, (e) => feed.broadcast(e));

  let ticking: Promise<void> | null = null;
  // One tick at a time: a slow push round must not overlap the next.
  const tick = () =>
    (ticking ??= notifier
      .tick(events)
      .then(() => undefined)
      .catch((e: Error) => log(`delivery tick failed: ${e.message}`))
      .finally(() => {
        ticking = null;
      }));
  const events: EventRefresher = new EventRefresher(store, clock, config.upstream, async (report) => {
    for (const s of report.sources) if (s.error) log(`events: ${s.source} ${s.outcome}: ${s.error}`);
    await tick();
  });

  const server = http.createServer(buildSpaceHandler({ store, notifier, events, clock, vapidPublicKey: config.vapid?.publicKey ?? null, page: config.page, corsOrigins: config.corsOrigins }));
  server.keepAliveTimeout = 5000;
  answerClientErrorsWithJson(server);
  feed.attach(server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    db.close();
    throw e;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;

  const timers: NodeJS.Timeout[] = [];
  // Refresh at start when the cache is empty, only the sample, or older than one refresh interval (the service was down).
  const initialRefresh = events.stale(config.refreshMinutes) ? events.refresh().done.catch((e: Error) => log(`events: refresh failed: ${e.message}`)) : Promise.resolve();
  if (opts.timers !== false) {
    if (config.refreshMinutes > 0) timers.push(setInterval(() => void events.refresh().done.catch(() => {}), config.refreshMinutes * 60_000));
    timers.push(setInterval(() => void tick(), config.tickSeconds * 1000));
  }
  const maintain = () => maintainDatabase(db, store, clock.now(), config.retentionDays);
  maintain();
  if (opts.timers !== false) {
    timers.push(
      setInterval(() => {
        try {
          const r = maintain();
          if (r.pruned.notifications > 0) log(`maintenance: removed ${r.pruned.notifications} log entries older than ${config.retentionDays} days`);
        } catch (e) {
          log(`maintenance failed: ${(e as Error).message}`);
        }
      }, config.maintenanceSeconds * 1000),
    );
  }

  return {
    url: `http://${host}:${address.port}`,
    server,
    db,
    store,
    notifier,
    events,
    feed,
    initialRefresh,
    tick,
    maintain,
    close: async () => {
      for (const t of timers) clearInterval(t);
      feed.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      // A refresh or tick still running finishes before the database closes under it.
      await events.whenIdle();
      await (ticking ?? Promise.resolve());
      await push.close();
      db.close();
    },
  };
}
