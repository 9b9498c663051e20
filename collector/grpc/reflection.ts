/**
 * gRPC server reflection (grpc.reflection.v1 and v1alpha), so grpcurl and
 * other generic clients can list and call the collector's services without
 * the proto files. The descriptors come from the same .proto files gen/ is
 * generated from (shipped beside dist/ in the image). Collector only: the
 * agent never loads protobufjs.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Server } from '@grpc/grpc-js';
import { loadSync, type PackageDefinition } from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import descriptor from 'protobufjs/ext/descriptor/index.js';

/** The repository's (or image's) proto/ folder, from dist/collector/grpc/. */
export const PROTO_ROOT = fileURLToPath(new URL('../../../proto/', import.meta.url));

const SERVED = ['cnibench/v1/agent.proto', 'cnibench/v1/run.proto', 'cnibench/v1/monitor.proto'];

/** The health service's proto as grpc-health-check ships it (its folder, its file). */
function healthProto(): { dir: string; file: string } | undefined {
  try {
    const pkg = createRequire(import.meta.url).resolve('grpc-health-check/package.json');
    const dir = join(dirname(pkg), 'proto');
    return existsSync(join(dir, 'health/v1/health.proto')) ? { dir, file: 'health/v1/health.proto' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Adds the reflection service for the collector's services (and grpc.health.v1
 * when its proto is found). Throws when proto/ is missing: an image built
 * without it is a build error, not a silent loss of reflection.
 */
export function addReflection(server: Server, protoRoot = PROTO_ROOT): void {
  const health = healthProto();
  const definition = loadSync([...SERVED, ...(health ? [health.file] : [])], {
    includeDirs: [protoRoot, ...(health ? [health.dir] : [])],
    keepCase: true,
  });
  new ReflectionService(withProtocMapEntries(definition)).addToServer(server);
}

interface MessageDescriptor {
  name: string;
  field?: { name: string; typeName?: string; label?: unknown }[];
  nestedType?: MessageDescriptor[];
  options?: { mapEntry?: boolean };
}

/** protoc's name of a map field's entry message: `iptables_table_rules` -> `IptablesTableRulesEntry`. */
export function mapEntryName(field: string): string {
  return `${field.replace(/(?:^|_)([a-z0-9])/g, (_m, c: string) => c.toUpperCase())}Entry`;
}

function fixMessage(m: MessageDescriptor, scope: string): void {
  const fqn = `${scope}.${m.name}`;
  for (const n of m.nestedType ?? []) {
    if (!n.options?.mapEntry) continue;
    const field = m.field?.find((f) => f.typeName === n.name || f.typeName === `${fqn}.${n.name}`);
    if (!field) continue;
    n.name = mapEntryName(field.name);
    field.typeName = `${fqn}.${n.name}`;
  }
  for (const n of m.nestedType ?? []) fixMessage(n, fqn);
}

/**
 * protobufjs names a map field's entry message after the field (`Labels`)
 * where protoc says `LabelsEntry`; strict readers (grpcurl, Go's protodesc)
 * refuse such a descriptor. Renames the entries as protoc would, in place.
 */
function withProtocMapEntries(definition: PackageDefinition): PackageDefinition {
  const fixed = new Map<Buffer, Buffer>();
  for (const value of Object.values(definition)) {
    const files = (value as { fileDescriptorProtos?: Buffer[] }).fileDescriptorProtos;
    if (!Array.isArray(files)) continue;
    files.forEach((bin, i) => {
      let out = fixed.get(bin);
      if (!out) {
        const file = descriptor.FileDescriptorProto.decode(bin) as unknown as {
          package?: string;
          messageType?: MessageDescriptor[];
        };
        for (const m of file.messageType ?? []) fixMessage(m, file.package ? `.${file.package}` : '');
        out = Buffer.from(descriptor.FileDescriptorProto.encode(file as never).finish());
        fixed.set(bin, out);
      }
      files[i] = out;
    });
  }
  return definition;
}
