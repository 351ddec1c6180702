/**
 * The positioner's HTTP server as `positioner serve` runs it: the REST app
 * (buildApp), JSON answers for requests too broken for the HTTP parser, and
 * the live status WebSocket on the same port. Not listening yet: the caller
 * binds it (tests to port 0).
 */
import http from 'node:http';
import { answerClientErrorsWithJson, buildApp, type AppDeps } from './app';
import { LiveStatus, type LiveStatusOptions } from './live-status';

export interface ApiServer {
  server: http.Server;
  live: LiveStatus;
  /** Stops the live feed and closes every connection. */
  close(): Promise<void>;
}

export function createApiServer(deps: AppDeps, opts: { liveStatus?: LiveStatusOptions } = {}): ApiServer {
  const server = http.createServer(buildApp(deps));
  server.keepAliveTimeout = 5000;
  answerClientErrorsWithJson(server);
  const live = new LiveStatus(deps.positioner, { scanner: deps.scanner, ...opts.liveStatus });
  live.attach(server);
  return {
    server,
    live,
    close: () =>
      new Promise<void>((resolve) => {
        live.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
