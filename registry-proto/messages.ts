/**
 * The registry messages: the pbjs static classes (fast binary encode/decode,
 * typed through the pbts declarations) and the reflected schema (for
 * ProtoJSON, the text format, `describe` and descriptor sets), both generated
 * from proto/registry/v1/device.proto into generated/ (see generate.ts).
 */
import protobuf from 'protobufjs';
import type * as pb from './generated/device-types';
import { fileDescriptorSetBase64, schemaJson } from './generated/device-schema';

// The static code is a CommonJS module whose types live in device-types.d.ts.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtime = require('./generated/device-static') as typeof pb;

export const v1 = runtime.registry.v1;
export const Timestamp = runtime.google.protobuf.Timestamp;

export type Latency = pb.registry.v1.Latency.$Properties;
export type ClientSupports = pb.registry.v1.ClientSupports.$Properties;
export type ClientConnectivity = pb.registry.v1.ClientConnectivity.$Properties;
export type GetDeviceResponse = pb.registry.v1.GetDeviceResponse.$Properties;
export type GetDeviceRoutesResponse = pb.registry.v1.GetDeviceRoutesResponse.$Properties;
export type EnableDeviceRoutesRequest = pb.registry.v1.EnableDeviceRoutesRequest.$Properties;
export type EnableDeviceRoutesResponse = pb.registry.v1.EnableDeviceRoutesResponse.$Properties;
export type TimestampValue = pb.google.protobuf.Timestamp.$Properties;

/** The proto package of the registry messages. */
export const PACKAGE = 'registry.v1';

/** What every pbjs static message class offers. */
export interface StaticMessageClass {
  encode(message: object, writer?: protobuf.Writer): protobuf.Writer;
  decode(reader: protobuf.Reader | Uint8Array, length?: number): object;
}

/** The reflected schema: every message of the registry package and its imports, resolved. */
export const schemaRoot: protobuf.Root = protobuf.Root.fromJSON(schemaJson as protobuf.INamespace);
schemaRoot.resolveAll();

/** The FileDescriptorSet of the schema (with imports and source info) as `buf build` writes it. */
export function fileDescriptorSetBytes(): Buffer {
  return Buffer.from(fileDescriptorSetBase64, 'base64');
}

/** Every message type of the schema by full name (`registry.v1.GetDeviceResponse`, `google.protobuf.Timestamp`). */
export function messageTypes(): protobuf.Type[] {
  const out: protobuf.Type[] = [];
  const walk = (ns: protobuf.NamespaceBase): void => {
    for (const nested of ns.nestedArray) {
      if (nested instanceof protobuf.Type) out.push(nested);
      if (nested instanceof protobuf.Namespace || nested instanceof protobuf.Type) walk(nested);
    }
  };
  walk(schemaRoot);
  return out.filter((t) => !t.name.endsWith('Entry') || !t.options?.map_entry);
}

/** The schema's service (its methods are the four device operations). */
export const deviceService: protobuf.Service = schemaRoot.lookupService(`${PACKAGE}.DeviceService`);

/** Full name without the leading dot. */
export function fullName(t: protobuf.ReflectionObject): string {
  return t.fullName.replace(/^\./, '');
}

/** The static class of a reflected type (same full name), or undefined. */
export function staticClassOf(type: protobuf.Type): StaticMessageClass | undefined {
  let node: unknown = runtime;
  for (const part of fullName(type).split('.')) {
    node = (node as Record<string, unknown> | undefined)?.[part];
  }
  return typeof node === 'function' ? (node as unknown as StaticMessageClass) : undefined;
}
