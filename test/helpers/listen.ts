/**
 * A test's own HTTP server on a free port of 127.0.0.1, closed (with its
 * kept-alive connections, and whatever `alsoOnClose` names) when the test ends.
 */
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';

export async function listenLocal(t: Test, server: http.Server, alsoOnClose?: () => void): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        alsoOnClose?.();
      }),
  );
  return (server.address() as AddressInfo).port;
}
