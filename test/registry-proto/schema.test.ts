/**
 * The .proto is the seed's contract: every message, field, type and number,
 * buf lint clean, and no breaking change against the committed baseline image
 * (registry-proto/baseline/registry-v1.binpb). The generated code in
 * registry-proto/generated/ matches what the generator makes from the .proto.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import protobuf from 'protobufjs';
import t, { type Test } from 'tap';
import { bufBinary, generate, REGISTRY_PROTO_DIR } from '../../registry-proto/generate';
import { deviceService, schemaRoot } from '../../registry-proto/messages';

const BASELINE = path.join(REGISTRY_PROTO_DIR, 'baseline', 'registry-v1.binpb');

// The seed's tables (part A), transcribed: message -> "name type number" per field.
const SEED: Record<string, string[]> = {
  Latency: ['latency_ms float 1', 'preferred bool 2'],
  ClientSupports: ['hair_pinning bool 1', 'ipv6 bool 2', 'pcp bool 3', 'pmp bool 4', 'udp bool 5', 'upnp bool 6'],
  ClientConnectivity: ['endpoints repeated string 1', 'derp string 2', 'mapping_varies_by_dest_ip bool 3', 'latency map<string,Latency> 4', 'client_supports ClientSupports 5'],
  GetDeviceResponse: [
    'addresses repeated string 1', 'id string 2', 'user string 3', 'name string 4', 'hostname string 5', 'client_version string 6',
    'update_available bool 7', 'os string 8', 'created Timestamp 9', 'last_seen Timestamp 10', 'key_expiry_disabled bool 11',
    'expires Timestamp 12', 'authorized bool 13', 'is_external bool 14', 'machine_key string 15', 'node_key string 16',
    'blocks_incoming_connections bool 17', 'enabled_routes repeated string 18', 'advertised_routes repeated string 19',
    'client_connectivity ClientConnectivity 20',
  ],
  GetDeviceRequest: ['id string 1'],
  DeleteDeviceRequest: ['id string 1'],
  DeleteDeviceResponse: [],
  GetDeviceRoutesRequest: ['id string 1'],
  GetDeviceRoutesResponse: ['enabled_routes repeated string 1', 'advertised_routes repeated string 2'],
  EnableDeviceRoutesRequest: ['id string 1', 'routes repeated string 2'],
  EnableDeviceRoutesResponse: ['enabled_routes repeated string 1', 'advertised_routes repeated string 2'],
};

function describeField(f: protobuf.Field): string {
  const short = (type: string) => (type === 'google.protobuf.Timestamp' ? 'Timestamp' : type);
  if (f instanceof protobuf.MapField) return `${f.protoName ?? f.name} map<${f.keyType},${short(f.type)}> ${f.id}`;
  return `${f.protoName ?? f.name} ${f.repeated ? 'repeated ' : ''}${short(f.type)} ${f.id}`;
}

t.test('every message has exactly the fields, types and numbers of the seed', async (t) => {
  const pkg = schemaRoot.lookup('registry.v1') as protobuf.Namespace;
  const messages = pkg.nestedArray.filter((n): n is protobuf.Type => n instanceof protobuf.Type).map((m) => m.name);
  t.same(messages.sort(), Object.keys(SEED).sort(), 'the same messages, no more');
  for (const [name, fields] of Object.entries(SEED)) {
    t.same(schemaRoot.lookupType(`registry.v1.${name}`).fieldsArray.map(describeField), fields, name);
  }
  const ts = schemaRoot.lookupType('google.protobuf.Timestamp');
  t.same(ts.fieldsArray.map(describeField), ['seconds int64 1', 'nanos int32 2'], 'the standard Timestamp');
});

t.test('the service has the four device operations', async (t) => {
  t.same(
    deviceService.methodsArray.map((m) => `${m.name}(${m.requestType}) ${m.responseType}`),
    [
      'GetDevice(GetDeviceRequest) GetDeviceResponse',
      'DeleteDevice(DeleteDeviceRequest) DeleteDeviceResponse',
      'GetDeviceRoutes(GetDeviceRoutesRequest) GetDeviceRoutesResponse',
      'EnableDeviceRoutes(EnableDeviceRoutesRequest) EnableDeviceRoutesResponse',
    ],
  );
});

function buf(args: string[], cwd = REGISTRY_PROTO_DIR) {
  return spawnSync(bufBinary(), args, { cwd, encoding: 'utf8', timeout: 60_000 });
}

t.test('buf lint (STANDARD) passes', async (t) => {
  const r = buf(['lint']);
  t.equal(r.status, 0, `buf lint: ${r.stdout}${r.stderr}`);
});

t.test('no breaking change against the committed baseline image', async (t) => {
  const r = buf(['breaking', '--against', BASELINE]);
  t.equal(r.status, 0, `buf breaking: ${r.stdout}${r.stderr}`);
});

/** A copy of the module in a temporary folder with `edit` applied to the .proto. */
function editedCopy(t: Test, edit: (proto: string) => string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-breaking-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.cpSync(path.join(REGISTRY_PROTO_DIR, 'buf.yaml'), path.join(dir, 'buf.yaml'));
  fs.cpSync(path.join(REGISTRY_PROTO_DIR, 'proto'), path.join(dir, 'proto'), { recursive: true });
  const file = path.join(dir, 'proto', 'registry', 'v1', 'device.proto');
  const before = fs.readFileSync(file, 'utf8');
  const after = edit(before);
  if (after === before) throw new Error('the edit changed nothing');
  fs.writeFileSync(file, after);
  return dir;
}

t.test('the breaking-change guard catches renumbered, retyped and deleted fields', async (t) => {
  const cases: [string, (s: string) => string, RegExp][] = [
    ['renumbered', (s) => s.replace('string derp = 2;', 'string derp = 21;'), /derp/],
    ['retyped', (s) => s.replace('float latency_ms = 1;', 'double latency_ms = 1;'), /latency_ms/],
    ['deleted', (s) => s.replace('  bool is_external = 14;\n', ''), /is_external/],
  ];
  for (const [what, edit, names] of cases) {
    const r = buf(['breaking', '--against', BASELINE], editedCopy(t, edit));
    t.not(r.status, 0, `${what}: buf breaking fails`);
    t.match(r.stdout + r.stderr, names, `${what}: the report names the field`);
  }
  // and a compatible change (a new field with a new number) passes
  const r = buf(['breaking', '--against', BASELINE], editedCopy(t, (s) => s.replace('  bool upnp = 6;\n', '  bool upnp = 6;\n  bool quic = 7;\n')));
  t.equal(r.status, 0, `adding a field is not breaking: ${r.stdout}${r.stderr}`);
});

t.test('the committed generated code is what the generator makes from the .proto', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'registry-generated-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  generate(dir);
  const committed = path.join(REGISTRY_PROTO_DIR, 'generated');
  t.same(fs.readdirSync(dir).sort(), fs.readdirSync(committed).sort(), 'the same files');
  for (const file of fs.readdirSync(dir)) {
    const same = fs.readFileSync(path.join(dir, file), 'utf8') === fs.readFileSync(path.join(committed, file), 'utf8');
    t.ok(same, `${file} is up to date (if not: npm run registry:generate, and commit)`);
  }
});
