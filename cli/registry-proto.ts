#!/usr/bin/env node
/**
 * `registry-proto`: the device-registry schema's command-line tool, in the
 * manner of protoc, buf and grpcurl: convert messages between binary, ProtoJSON
 * and text (one message or length-delimited streams), describe types, write
 * the descriptor set, call an operation on a running registry server; and run
 * that server, manage its API keys, import and export its devices.
 *
 * Exit codes: 0 done; 1 the server or the database refused (unknown device,
 * external device, unknown key id); 2 usage error or input that does not
 * parse (the message says where); 3 the server could not be reached; 4 the
 * server refused the API key.
 */
import fs from 'node:fs';
import yargs, { type Argv } from 'yargs';
import { codecFor, messageTypeNames, type Message, type MessageCodec } from '../registry-proto/codec';
import { CodecError, RegistryError } from '../registry-proto/errors';
import { assertNoDuplicateKeys, jsonKeyCount } from '../registry-proto/json-reader';
import type { GetDeviceResponse } from '../registry-proto/messages';
import type { RegistryStore } from '../registry-proto/server/store';
import { call, CallError, operation } from '../registry-proto/tool/client';
import { describe, descriptorSet, listSchema } from '../registry-proto/tool/descriptors';
import { splitTailscaleDevice, tailscaleDeviceJson, type TailscaleExtras } from '../registry-proto/tailscale-json';
import { FORMATS, readMessages, writeMessages, type Format } from '../registry-proto/tool/formats';
import { useColor } from './progress';

const EXIT = { ok: 0, refused: 1, usage: 2, unreachable: 3, unauthenticated: 4 } as const;
const DEFAULT_URL = 'http://127.0.0.1:8090';
const DEFAULT_DB = 'registry.db';

class UsageError extends Error {}

/** yargs-parser drops a lone "-" argument: it is passed through as this and read as stdin/stdout. */
const STDIO = '\u0000stdio';
const isStdio = (file: string | undefined) => file === undefined || file === '-' || file === STDIO;

function fail(message: string, code: number): never {
  const red = useColor(process.stderr) ? (s: string) => `\x1b[31m${s}\x1b[0m` : (s: string) => s;
  process.stderr.write(`${red('error:')} ${message}\n`);
  process.exit(code);
}

function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError || err instanceof CodecError) return EXIT.usage;
  if (err instanceof CallError) return err.status === 0 ? (err.code === 'usage' ? EXIT.usage : EXIT.unreachable) : err.status === 401 ? EXIT.unauthenticated : EXIT.refused;
  if (err instanceof RegistryError) return err.code === 'REG_ERR_IMPORT' || err.code === 'REG_ERR_INVALID_ROUTE' ? EXIT.usage : EXIT.refused;
  return EXIT.refused;
}

/** The whole of a file, or of stdin for '-' or none. */
function readInput(file: string | undefined): Buffer {
  if (isStdio(file)) {
    if (process.stdin.isTTY) process.stderr.write('reading the input from the terminal: end it with Ctrl-D (or give --in FILE)\n');
    return fs.readFileSync(0);
  }
  try {
    return fs.readFileSync(file!);
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

function writeOutput(file: string | undefined, data: Buffer, binary: boolean): void {
  if (isStdio(file)) {
    if (binary && process.stdout.isTTY && file === undefined) {
      throw new UsageError('refusing to write binary protobuf to a terminal: redirect stdout, or give --out FILE (--out - forces it)');
    }
    process.stdout.write(data);
    return;
  }
  try {
    fs.writeFileSync(file!, data);
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

interface ConvertArgs {
  type: string;
  from: Format;
  to: Format;
  in?: string;
  out?: string;
  delimited: boolean;
  'ignore-unknown': boolean;
  'discard-unknown': boolean;
  'emit-defaults': boolean;
  'proto-names': boolean;
  indent: number;
}

function convert(argv: ConvertArgs): void {
  const codec = codecFor(argv.type);
  const input = readInput(argv.in);
  let messages: Message[];
  try {
    messages = readMessages(codec, argv.from, input, { delimited: argv.delimited, ignoreUnknownFields: argv['ignore-unknown'], discardUnknown: argv['discard-unknown'] });
  } catch (err) {
    // The commonest slip: JSON or text given to decode. Say so.
    const head = input.subarray(0, 64).toString('utf8').trimStart();
    if (err instanceof CodecError && argv.from === 'binary' && /^[[{]|^[a-z_]+\s*[:{]/.test(head)) {
      err.message += ` (the input looks like ${head.startsWith('{') || head.startsWith('[') ? 'JSON' : 'text format'}: to read it, use \`encode --from ...\` or \`convert --from ...\`)`;
    }
    throw err;
  }
  const out = writeMessages(codec, argv.to, messages, { delimited: argv.delimited, emitDefaults: argv['emit-defaults'], protoNames: argv['proto-names'], indent: argv.indent || undefined });
  writeOutput(argv.out, out, argv.to === 'binary');
}

const typeNames = () => messageTypeNames().join(', ');

function withIo<T>(y: Argv<T>) {
  return y
    .positional('type', { type: 'string', demandOption: true, describe: `message type, e.g. GetDeviceResponse or registry.v1.GetDeviceResponse` })
    .option('in', { alias: 'i', type: 'string', describe: 'read this file (default: stdin)' })
    .option('out', { alias: 'o', type: 'string', describe: 'write this file (default: stdout)' })
    .option('delimited', { type: 'boolean', default: false, describe: 'a stream of messages: length-delimited binary, NDJSON (or a JSON array), text separated by lines "---"' })
    .option('ignore-unknown', { type: 'boolean', default: false, describe: 'JSON input: skip unknown fields instead of refusing them' })
    .option('discard-unknown', { type: 'boolean', default: false, describe: 'binary input: drop fields the schema does not know (kept by default, and written back in binary output; JSON and text output never show them)' })
    .option('emit-defaults', { type: 'boolean', default: false, describe: 'JSON output: also print fields at their default values' })
    .option('proto-names', { type: 'boolean', default: false, describe: 'JSON output: proto field names (last_seen) instead of lowerCamelCase (lastSeen)' })
    .option('indent', { type: 'number', default: 2, describe: 'JSON output of a single message: spaces of indentation (0: one line)' });
}

// The server side (express, better-sqlite3) is loaded only by the commands
// that use it: the message tools start faster without it.
/* eslint-disable @typescript-eslint/no-require-imports */
const storeModule = () => require('../registry-proto/server/store') as typeof import('../registry-proto/server/store');
const serverModule = () => require('../registry-proto/server/server') as typeof import('../registry-proto/server/server');
/* eslint-enable @typescript-eslint/no-require-imports */

function openStore(argv: { db?: string }, mustExist: boolean): RegistryStore {
  return new (storeModule().RegistryStore)(argv.db ?? process.env.REGISTRY_DB ?? DEFAULT_DB, { mustExist });
}

function print(argv: { json: boolean }, data: unknown, human: string): void {
  process.stdout.write(argv.json ? `${JSON.stringify(data)}\n` : `${human}\n`);
}

/** The request of `call`: -d JSON (or @FILE, @- for stdin), else an id argument, else stdin. */
function callRequest(codec: MessageCodec, argv: { data?: string; id?: string; format: 'json' | 'text' }): Message {
  if (argv.data !== undefined) {
    const text = argv.data.startsWith('@') ? readInput(argv.data.slice(1)).toString('utf8') : argv.data;
    return argv.format === 'text' ? codec.fromText(text) : codec.fromJsonString(text);
  }
  if (argv.id !== undefined) return codec.fromJson({ id: argv.id });
  throw new UsageError(`give the request with -d, e.g. -d '{"id": "27"}', or the id with --id`);
}

async function serve(argv: { db?: string; host?: string; port?: number; tailnet?: string }): Promise<void> {
  const port = argv.port ?? (process.env.PORT ? Number(process.env.PORT) : 8090);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0..65535, not ${argv.port ?? process.env.PORT}`);
  const dbFile = argv.db ?? process.env.REGISTRY_DB ?? DEFAULT_DB;
  const registry = await serverModule().startRegistryServer({ dbFile, host: argv.host ?? process.env.HOST ?? '127.0.0.1', port, tailnet: argv.tailnet ?? process.env.REGISTRY_TAILNET });
  process.stdout.write(`registry-proto: serving ${registry.url} (database ${dbFile}, ${registry.store.deviceCount()} devices)\n`);
  if (registry.store.listApiKeys().every((k) => k.revoked)) {
    process.stderr.write(`registry-proto: no API keys yet, so every request is refused: make one with \`registry-proto keys create --db ${dbFile}\`\n`);
  }
  const stop = () => {
    void registry.close().then(() => process.exit(EXIT.ok));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}


function importFile(argv: { file: string; db?: string; replace: boolean; tailscale: boolean; 'ignore-unknown': boolean; json: boolean }): void {
  const text = readInput(argv.file).toString('utf8');
  const source = isStdio(argv.file) ? 'stdin' : argv.file;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new RegistryError('REG_ERR_IMPORT', `${source} is not JSON: ${(err as Error).message}`);
  }
  try {
    assertNoDuplicateKeys(text, jsonKeyCount(parsed));
  } catch (err) {
    throw new RegistryError('REG_ERR_IMPORT', `${source}: ${(err as Error).message.replace(/^invalid JSON: /, '')}`);
  }
  const list = Array.isArray(parsed) ? parsed : (parsed as { devices?: unknown })?.devices;
  if (!Array.isArray(list)) throw new RegistryError('REG_ERR_IMPORT', `${source}: expected {"devices": [...]} or a JSON array of device records`);
  const codec = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
  const extras: (TailscaleExtras | undefined)[] = [];
  const devices = list.map((item, i) => {
    try {
      // Tailscale's JSON: its spellings, and its own fields kept beside the record (served on API v2).
      const { protoJson, extras: more } = argv.tailscale ? splitTailscaleDevice(item) : { protoJson: item, extras: undefined };
      extras.push(more);
      return codec.fromJson(protoJson, { ignoreUnknownFields: argv['ignore-unknown'] });
    } catch (err) {
      const id = (item as { id?: unknown })?.id;
      throw new RegistryError('REG_ERR_IMPORT', `${source}: device #${i + 1}${typeof id === 'string' ? ` (id ${id})` : ''}: ${(err as Error).message}`);
    }
  });
  const store = openStore(argv, false);
  try {
    const r = store.importDevices(devices, { replaceAll: argv.replace, extras });
    print(argv, r, `imported ${devices.length} devices into ${store.file}: ${r.added} added, ${r.replaced} replaced${argv.replace ? `, ${r.removed} removed` : ''}`);
  } finally {
    store.close();
  }
}

export async function main(args: string[]): Promise<unknown> {
  return yargs(args.map((a) => (a === '-' ? STDIO : a)))
    .scriptName('registry-proto')
    .usage('$0 <command> [options]\n\nDevice-registry messages (registry.v1): convert, describe, call; and the registry server.')
    .option('json', { type: 'boolean', default: false, describe: 'machine-readable output (for describe, keys, devices import)' })
    .command(
      'encode <type>',
      'ProtoJSON or text in, binary protobuf out (like protoc --encode)',
      (y) => withIo(y).option('from', { choices: ['json', 'text'] as const, default: 'json' as const, describe: 'input format' }),
      (argv) => convert({ ...(argv as unknown as ConvertArgs), to: 'binary' }),
    )
    .command(
      'decode <type>',
      'binary protobuf in, ProtoJSON or text out (like protoc --decode)',
      (y) => withIo(y).option('to', { choices: ['json', 'text'] as const, default: 'json' as const, describe: 'output format' }),
      (argv) => convert({ ...(argv as unknown as ConvertArgs), from: 'binary' }),
    )
    .command(
      'convert <type>',
      'any of binary, json, text to any other',
      (y) => withIo(y).option('from', { choices: FORMATS, demandOption: true }).option('to', { choices: FORMATS, demandOption: true }),
      (argv) => convert(argv as unknown as ConvertArgs),
    )
    .command(
      'describe [name]',
      'show a message type or the service in .proto syntax (no name: list them)',
      (y) => y.positional('name', { type: 'string', describe: 'GetDeviceResponse, registry.v1.Latency, DeviceService, ...' }),
      (argv) => {
        if (!argv.name) {
          const all = listSchema();
          return print(argv, all, [...all.messages.map((m) => `message ${m}`), ...all.services.map((s) => `service ${s}`)].join('\n'));
        }
        const d = describe(argv.name);
        print(argv, d, d.proto.trimEnd());
      },
    )
    .command(
      'descriptor-set',
      'write the schema as a FileDescriptorSet (for protoc --descriptor_set_in, grpcurl -protoset, buf)',
      (y) =>
        y
          .option('out', { alias: 'o', type: 'string', describe: 'write this file (default: stdout)' })
          .option('include-source-info', { type: 'boolean', default: false, describe: 'keep comments and source positions' })
          .option('exclude-imports', { type: 'boolean', default: false, describe: 'leave out google/protobuf/timestamp.proto' }),
      (argv) => writeOutput(argv.out, descriptorSet({ includeSourceInfo: argv['include-source-info'], excludeImports: argv['exclude-imports'] }), true),
    )
    .command(
      'call <operation>',
      'call GetDevice, DeleteDevice, GetDeviceRoutes or EnableDeviceRoutes on a running registry server',
      (y) =>
        y
          .positional('operation', { type: 'string', demandOption: true, describe: 'operation, e.g. GetDevice or registry.v1.DeviceService/GetDevice' })
          .option('data', { alias: 'd', type: 'string', describe: 'the request: ProtoJSON (or text with --format text); @FILE reads a file, @- stdin' })
          .option('id', { type: 'string', describe: 'shorthand for -d \'{"id": "<id>"}\'' })
          .option('format', { choices: ['json', 'text'] as const, default: 'json' as const, describe: 'format of the request given with -d' })
          .option('to', { choices: FORMATS, default: 'json' as Format, describe: 'format of the response printed' })
          .option('wire', { choices: ['binary', 'json'] as const, default: 'binary' as const, describe: 'encoding on the HTTP wire' })
          .option('url', { type: 'string', describe: `registry base URL (default: $REGISTRY_URL or ${DEFAULT_URL})` })
          .option('key', { type: 'string', describe: 'API key (default: $REGISTRY_API_KEY)' })
          .option('timeout', { type: 'number', default: 10, describe: 'seconds to wait for the answer' })
          .option('emit-defaults', { type: 'boolean', default: false })
          .option('proto-names', { type: 'boolean', default: false })
          .option('out', { alias: 'o', type: 'string', describe: 'write the response to this file' }),
      async (argv) => {
        const op = operation(argv.operation);
        const request = callRequest(op.request, argv);
        const response = await call(op, request, {
          baseUrl: argv.url ?? process.env.REGISTRY_URL ?? DEFAULT_URL,
          apiKey: argv.key ?? process.env.REGISTRY_API_KEY,
          wire: argv.wire,
          timeoutMs: argv.timeout * 1000,
        });
        writeOutput(argv.out, writeMessages(op.response, argv.to, [response], { emitDefaults: argv['emit-defaults'], protoNames: argv['proto-names'], indent: 2 }), argv.to === 'binary');
      },
    )
    .command(
      'serve',
      'serve the registry API on a SQLite database file',
      (y) =>
        y
          .option('db', { type: 'string', describe: `database file (default: $REGISTRY_DB or ${DEFAULT_DB}; made if missing)` })
          .option('host', { type: 'string', describe: 'address to listen on (default: $HOST or 127.0.0.1)' })
          .option('port', { alias: 'p', type: 'number', describe: 'port (default: $PORT or 8090; 0 picks a free one)' })
          .option('tailnet', { type: 'string', describe: 'tailnet name for /api/v2/tailnet/{tailnet}/devices besides "-" (default: $REGISTRY_TAILNET)' }),
      (argv) => serve(argv),
    )
    .command('keys', 'manage the API keys of a registry database', (y) =>
      y
        .option('db', { type: 'string', describe: `database file (default: $REGISTRY_DB or ${DEFAULT_DB})` })
        .command(
          'create',
          'make a new API key and print it (the only time it is shown)',
          (k) =>
            k
              .option('description', { type: 'string', default: '', describe: 'what the key is for' })
              .option('expires-days', { type: 'number', describe: 'the key stops working after this many days (default: never)' }),
          (argv) => {
            const days = argv['expires-days'];
            if (days !== undefined && !(days > 0)) throw new UsageError('--expires-days must be a positive number');
            const store = openStore(argv, false);
            try {
              const expiresMs = days === undefined ? undefined : Date.now() + days * 86_400_000;
              const { id, key } = store.createApiKey({ description: argv.description, expiresMs });
              const expires = expiresMs === undefined ? undefined : new Date(expiresMs).toISOString();
              print(argv, { id, key, expires }, key);
              if (!argv.json) process.stderr.write(`key ${id} created in ${store.file}${expires ? `, expires ${expires}` : ''}; it is not shown again: send it as "Authorization: Bearer <key>" or REGISTRY_API_KEY\n`);
            } finally {
              store.close();
            }
          },
        )
        .command('list', 'list the keys (never their secrets)', (k) => k, (argv) => {
          const store = openStore(argv, true);
          try {
            const keys = store.listApiKeys();
            const iso = (ms?: number) => (ms === undefined ? '-' : new Date(ms).toISOString());
            print(
              argv,
              keys,
              keys.length === 0 ? 'no keys' : keys.map((k) => `${k.id}  created ${iso(k.createdMs)}  expires ${iso(k.expiresMs)}  last used ${iso(k.lastUsedMs)}${k.revoked ? '  REVOKED' : ''}  ${k.description}`).join('\n'),
            );
          } finally {
            store.close();
          }
        })
        .command('revoke <id>', 'revoke a key by its id', (k) => k.positional('id', { type: 'string', demandOption: true }), (argv) => {
          const store = openStore(argv, true);
          try {
            if (!store.revokeApiKey(argv.id)) throw new RegistryError('REG_ERR_NOT_FOUND', `no key ${argv.id} in ${store.file} (see keys list)`);
            print(argv, { id: argv.id, revoked: true }, `key ${argv.id} revoked`);
          } finally {
            store.close();
          }
        })
        .demandCommand(1, 'name a keys command: create, list or revoke'),
    )
    .command('devices', 'import and export the devices of a registry database', (y) =>
      y
        .option('db', { type: 'string', describe: `database file (default: $REGISTRY_DB or ${DEFAULT_DB})` })
        .command(
          'import <file>',
          'add or replace devices from a JSON file ({"devices": [...]} or an array of ProtoJSON device records; - for stdin), all or nothing',
          (k) =>
            k
              .positional('file', { type: 'string', demandOption: true })
              .option('replace', { type: 'boolean', default: false, describe: 'also remove the devices the file does not list' })
              .option('tailscale', { type: 'boolean', default: false, describe: "Tailscale's JSON (API v2): its spellings (mappingVariesByDestIP, \"\" for an unknown time) and its own fields (nodeId, tags, tailnetLockKey, tailnetLockError), kept for API v2" })
              .option('ignore-unknown', { type: 'boolean', default: false, describe: 'skip fields the schema does not have instead of refusing the file' }),
          (argv) => importFile(argv),
        )
        .command(
          'export [file]',
          'write every device as {"devices": [...]} ProtoJSON, or Tailscale\'s JSON with --tailscale (default: stdout)',
          (k) =>
            k
              .positional('file', { type: 'string' })
              .option('emit-defaults', { type: 'boolean', default: false })
              .option('tailscale', { type: 'boolean', default: false, describe: "Tailscale's JSON as API v2 writes it with ?fields=all (its own fields included)" }),
          (argv) => {
          const store = openStore(argv, true);
          try {
            const codec = codecFor<GetDeviceResponse>('registry.v1.GetDeviceResponse');
            const devices = argv.tailscale
              ? store.listDevicesWithExtras().map(({ device, extras }) => tailscaleDeviceJson(device, extras, 'all'))
              : store.listDevices().map((d) => codec.toJson(d, { emitDefaults: argv['emit-defaults'] }));
            writeOutput(argv.file, Buffer.from(`${JSON.stringify({ devices }, null, 2)}\n`), false);
            if (!isStdio(argv.file)) process.stderr.write(`exported ${devices.length} devices to ${argv.file}\n`);
          } finally {
            store.close();
          }
        },
        )
        .demandCommand(1, 'name a devices command: import or export'),
    )
    .demandCommand(1, 'name a command: encode, decode, convert, describe, descriptor-set, call, serve, keys or devices')
    .strict()
    .recommendCommands()
    .fail((msg, err, y) => {
      if (err) fail(err.message, exitCodeOf(err));
      process.stderr.write(`${y.help()}\n`);
      fail(`${msg}${/type/.test(msg) ? ` (message types: ${typeNames()})` : ''}`, EXIT.usage);
    })
    .help()
    .alias('help', 'h')
    .version()
    .wrap(Math.min(100, process.stdout.columns || 100))
    .parseAsync();
}

if (require.main === module) {
  Promise.resolve(main(process.argv.slice(2))).catch((e: unknown) => fail(e instanceof Error ? e.message : String(e), exitCodeOf(e)));
}
