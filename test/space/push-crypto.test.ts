/**
 * aes128gcm Web Push encryption (RFC 8291 / RFC 8188): what we encrypt, an
 * independent implementation (http_ece, the library web-push builds on)
 * decrypts with the client's private key; every message has its own
 * ephemeral key and salt; keys that are not P-256 points are refused.
 * (End to end, web-push-testing decrypts every push in push.test.ts.)
 */
import crypto from 'node:crypto';
import t from 'tap';
import { clientKeys, EncryptPool, encryptPayload, PushKeyError } from '../../api/space/push-crypto';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const ece = require('http_ece') as { decrypt(body: Buffer, opts: { version: string; privateKey: crypto.ECDH; authSecret: string }): Buffer };

function client() {
  const ecdh = crypto.createECDH('prime256v1');
  ecdh.generateKeys();
  const auth = crypto.randomBytes(16).toString('base64url');
  return { ecdh, keys: clientKeys(ecdh.getPublicKey().toString('base64url'), auth), auth };
}

t.test('http_ece decrypts what we encrypt, for payloads from empty to 3000 bytes', async (t) => {
  const c = client();
  for (const payload of ['', '{"title":"Test notification"}', 'é✓🚀'.repeat(50), 'x'.repeat(3000)]) {
    const body = encryptPayload(Buffer.from(payload), c.keys);
    t.equal(ece.decrypt(body, { version: 'aes128gcm', privateKey: c.ecdh, authSecret: c.auth }).toString(), payload, `${Buffer.byteLength(payload)} bytes`);
    t.equal(body.readUInt32BE(16), 4096, 'record size');
    t.equal(body[20], 65, 'key id is the 65-byte sender key');
  }
});

t.test('a new ephemeral key and salt per message', async (t) => {
  const c = client();
  const a = encryptPayload(Buffer.from('same'), c.keys);
  const b = encryptPayload(Buffer.from('same'), c.keys);
  t.not(a.subarray(0, 16).toString('hex'), b.subarray(0, 16).toString('hex'), 'salt');
  t.not(a.subarray(21, 86).toString('hex'), b.subarray(21, 86).toString('hex'), 'sender key');
});

t.test('keys that cannot be used are refused with PushKeyError', async (t) => {
  const auth = crypto.randomBytes(16).toString('base64url');
  t.throws(() => clientKeys(Buffer.alloc(33, 2).toString('base64url'), auth), PushKeyError, 'compressed or short key');
  t.throws(() => clientKeys(client().keys.uaPublic.toString('base64url'), 'c2hvcnQ'), PushKeyError, 'short auth secret');
  const offCurve = Buffer.alloc(65, 7);
  offCurve[0] = 4;
  t.throws(() => encryptPayload(Buffer.from('x'), { uaPublic: offCurve, authSecret: crypto.randomBytes(16) }), PushKeyError, 'not a point on the curve');
  t.throws(() => encryptPayload(Buffer.alloc(4096 - 16), client().keys), /does not fit/);
});

t.test('the worker pool: same encryption on other threads, key errors come back as PushKeyError, close ends it', async (t) => {
  const pool = new EncryptPool(2);
  t.teardown(() => pool.close());
  const clients = Array.from({ length: 6 }, client);
  const bodies = await Promise.all(clients.map((c, i) => pool.encrypt(Buffer.from(`message ${i}`), c.keys)));
  bodies.forEach((body, i) => t.equal(ece.decrypt(body, { version: 'aes128gcm', privateKey: clients[i].ecdh, authSecret: clients[i].auth }).toString(), `message ${i}`));
  const offCurve = Buffer.alloc(65, 7);
  offCurve[0] = 4;
  await t.rejects(pool.encrypt(Buffer.from('x'), { uaPublic: offCurve, authSecret: crypto.randomBytes(16) }), PushKeyError);
  await pool.close();
  // Closed: the next call starts new workers.
  const again = await pool.encrypt(Buffer.from('after close'), clients[0].keys);
  t.equal(ece.decrypt(again, { version: 'aes128gcm', privateKey: clients[0].ecdh, authSecret: clients[0].auth }).toString(), 'after close');
});
