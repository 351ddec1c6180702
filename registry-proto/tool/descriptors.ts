/**
 * The schema as descriptors: the FileDescriptorSet that `descriptor-set`
 * writes (the one buf built, optionally without source info or imports), and
 * `describe`, which prints a type or the service in .proto syntax with the
 * comments of the .proto (taken from the source info).
 */
import protobuf from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor';
import { CodecError } from '../errors';
import { deviceService, fileDescriptorSetBytes, fullName, messageTypes, PACKAGE } from '../messages';

interface SourceLocation {
  path?: number[];
  leadingComments?: string;
  trailingComments?: string;
}
interface FileProto {
  name?: string;
  package?: string;
  messageType?: { name?: string; field?: { name?: string }[] }[];
  service?: { name?: string; method?: { name?: string }[] }[];
  sourceCodeInfo?: { location?: SourceLocation[] } | null;
}

// The descriptor extension's reflected types (protobufjs/ext/descriptor).
const FileDescriptorSet = (descriptor as unknown as { FileDescriptorSet: protobuf.Type }).FileDescriptorSet;

function decodeSet(): { file: FileProto[] } {
  return FileDescriptorSet.decode(fileDescriptorSetBytes()) as unknown as { file: FileProto[] };
}

export interface DescriptorSetOptions {
  includeSourceInfo?: boolean;
  excludeImports?: boolean;
}

/** The FileDescriptorSet bytes (as protoc --descriptor_set_out: imports included, source info left out, unless asked). */
export function descriptorSet(options: DescriptorSetOptions = {}): Buffer {
  if (options.includeSourceInfo && !options.excludeImports) return fileDescriptorSetBytes();
  const set = decodeSet();
  let files = set.file;
  if (options.excludeImports) files = files.filter((f) => f.package === PACKAGE);
  if (!options.includeSourceInfo) files = files.map((f) => ({ ...f, sourceCodeInfo: null }));
  return Buffer.from(FileDescriptorSet.encode(FileDescriptorSet.fromObject({ file: files })).finish());
}

/** Comments by full name (`registry.v1.Latency`, `registry.v1.Latency.latency_ms`, `registry.v1.DeviceService.GetDevice`). */
function commentsByName(): Map<string, string> {
  const out = new Map<string, string>();
  for (const file of decodeSet().file) {
    const pkg = file.package ? `${file.package}.` : '';
    for (const loc of file.sourceCodeInfo?.location ?? []) {
      const p = loc.path ?? [];
      const comment = (loc.leadingComments ?? loc.trailingComments ?? '').trim();
      if (!comment) continue;
      let name: string | undefined;
      if (p[0] === 4 && p.length === 2) name = file.messageType?.[p[1]]?.name;
      else if (p[0] === 4 && p.length === 4 && p[2] === 2) {
        const m = file.messageType?.[p[1]];
        name = m && `${m.name}.${m.field?.[p[3]]?.name}`;
      } else if (p[0] === 6 && p.length === 2) name = file.service?.[p[1]]?.name;
      else if (p[0] === 6 && p.length === 4 && p[2] === 2) {
        const s = file.service?.[p[1]];
        name = s && `${s.name}.${s.method?.[p[3]]?.name}`;
      }
      if (name) out.set(pkg + name, comment);
    }
  }
  return out;
}

const commentLines = (comment: string | undefined, indent: string) =>
  comment ? comment.split('\n').map((l) => `${indent}//${l.startsWith(' ') || l === '' ? '' : ' '}${l}\n`).join('') : '';

function fieldType(f: protobuf.Field): string {
  const name = (t: string) => (f.resolvedType ? fullName(f.resolvedType) : t);
  if (f instanceof protobuf.MapField) return `map<${f.keyType}, ${name(f.type)}>`;
  return `${f.repeated ? 'repeated ' : ''}${name(f.type)}`;
}

/** HTTP binding of each service method (docs/registry-proto.md). */
export const HTTP_BINDINGS: Record<string, { method: string; path: string }> = {
  GetDevice: { method: 'GET', path: '/api/v1/device/{id}' },
  DeleteDevice: { method: 'DELETE', path: '/api/v1/device/{id}' },
  GetDeviceRoutes: { method: 'GET', path: '/api/v1/device/{id}/routes' },
  EnableDeviceRoutes: { method: 'POST', path: '/api/v1/device/{id}/routes' },
};

export interface Described {
  kind: 'message' | 'service';
  name: string;
  comment?: string;
  fields?: { name: string; jsonName: string; number: number; type: string; comment?: string }[];
  methods?: { name: string; request: string; response: string; http: string; comment?: string }[];
  proto: string;
}

/** A message type or the service, in .proto syntax and as data. */
export function describe(name: string): Described {
  const comments = commentsByName();
  const key = name.replace(/^\./, '');
  const serviceName = fullName(deviceService);
  if (key === serviceName || key === deviceService.name) {
    const methods = deviceService.methodsArray.map((m) => ({
      name: m.name,
      request: `${PACKAGE}.${m.requestType}`,
      response: `${PACKAGE}.${m.responseType}`,
      http: `${HTTP_BINDINGS[m.name]?.method} ${HTTP_BINDINGS[m.name]?.path}`,
      comment: comments.get(`${serviceName}.${m.name}`),
    }));
    const proto =
      commentLines(comments.get(serviceName), '') +
      `service ${deviceService.name} {\n` +
      methods.map((m) => `${commentLines(m.comment, '  ')}  rpc ${m.name}(${m.request}) returns (${m.response}); // ${m.http}\n`).join('') +
      '}\n';
    return { kind: 'service', name: serviceName, comment: comments.get(serviceName), methods, proto };
  }
  const type = messageTypes().find((t) => fullName(t) === key || fullName(t) === `${PACKAGE}.${key}`);
  if (!type) {
    throw new CodecError('REG_ERR_UNKNOWN_TYPE', `no message or service '${name}' in the schema; known: ${[...messageTypes().map(fullName), serviceName].join(', ')}`);
  }
  const tn = fullName(type);
  const fields = type.fieldsArray.map((f) => {
    f.resolve();
    const protoName = f.protoName ?? f.name;
    return { name: protoName, jsonName: f.jsonName ?? f.name, number: f.id, type: fieldType(f), comment: comments.get(`${tn}.${protoName}`) };
  });
  const proto =
    commentLines(comments.get(tn), '') +
    `message ${type.name} {\n` +
    fields.map((f) => `${commentLines(f.comment, '  ')}  ${f.type} ${f.name} = ${f.number};${f.jsonName !== f.name ? ` // JSON: ${f.jsonName}` : ''}\n`).join('') +
    '}\n';
  return { kind: 'message', name: tn, comment: comments.get(tn), fields, proto };
}

/** Every message type and the service, for `describe` with no name. */
export function listSchema(): { messages: string[]; services: string[] } {
  return { messages: messageTypes().map(fullName), services: [fullName(deviceService)] };
}

