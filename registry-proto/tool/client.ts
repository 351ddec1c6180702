/**
 * `registry-proto call`: one DeviceService operation against a running
 * registry server over its HTTP binding (descriptors.ts HTTP_BINDINGS),
 * speaking protobuf on the wire by default or ProtoJSON with wire 'json'.
 */
import { codecFor, type Message, type MessageCodec } from '../codec';
import { CodecError } from '../errors';
import { deviceService, PACKAGE } from '../messages';
import { HTTP_BINDINGS } from './descriptors';

export class CallError extends Error {
  constructor(
    message: string,
    /** HTTP status, or 0 when the server could not be reached. */
    readonly status: number,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'CallError';
  }
}

export interface Operation {
  name: string;
  request: MessageCodec;
  response: MessageCodec;
  http: { method: string; path: string };
}

/** An operation by name: `GetDevice`, `registry.v1.DeviceService/GetDevice` or `registry.v1.DeviceService.GetDevice`. */
export function operation(name: string): Operation {
  const short = name.replace(/^(\.?registry\.v1\.)?DeviceService[/.]/, '');
  const m = deviceService.methodsArray.find((x) => x.name === short);
  if (!m) throw new CodecError('REG_ERR_UNKNOWN_TYPE', `no operation '${name}': the service has ${deviceService.methodsArray.map((x) => x.name).join(', ')}`);
  return { name: m.name, request: codecFor(`${PACKAGE}.${m.requestType}`), response: codecFor(`${PACKAGE}.${m.responseType}`), http: HTTP_BINDINGS[m.name] };
}

export interface CallOptions {
  baseUrl: string;
  apiKey?: string;
  wire: 'binary' | 'json';
  timeoutMs: number;
}

const PB = 'application/x-protobuf';

export async function call(op: Operation, request: Message, options: CallOptions): Promise<Message> {
  const id = typeof request.id === 'string' ? request.id : '';
  if (!id) throw new CallError(`${op.name} needs the device id in the request, e.g. '{"id": "27"}'`, 0, 'usage');
  const url = new URL(options.baseUrl.replace(/\/+$/, '') + op.http.path.replace('{id}', encodeURIComponent(id)));
  const accept = options.wire === 'binary' ? PB : 'application/json';
  const headers: Record<string, string> = { accept };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  let body: Uint8Array | string | undefined;
  if (op.http.method === 'POST') {
    headers['content-type'] = accept;
    body = options.wire === 'binary' ? op.request.encode(request) : op.request.toJsonString(request);
  }
  let res: Response;
  try {
    res = await fetch(url, { method: op.http.method, headers, body: typeof body === 'string' ? body : body && new Uint8Array(body), signal: AbortSignal.timeout(options.timeoutMs) });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const why = (err as Error).name === 'TimeoutError' ? `no answer within ${options.timeoutMs} ms` : (cause?.code ?? cause?.message ?? (err as Error).message);
    throw new CallError(`cannot reach the registry at ${url.origin} (${why}): is \`registry-proto serve\` running there? Set --url or REGISTRY_URL`, 0);
  }
  const bytes = Buffer.from(await res.arrayBuffer());
  const type = res.headers.get('content-type') ?? '';
  if (!res.ok) {
    let message = bytes.toString('utf8').slice(0, 500);
    try {
      message = (JSON.parse(message) as { message?: string }).message ?? message;
    } catch {
      // not JSON: show it as it came
    }
    throw new CallError(message, res.status, res.headers.get('registry-error-code') ?? undefined);
  }
  if (type.startsWith(PB)) return op.response.decode(bytes);
  if (type.startsWith('application/json')) return op.response.fromJsonString(bytes.toString('utf8'));
  throw new CallError(`the server answered with ${type || 'no Content-Type'}, expected ${accept}`, res.status);
}
