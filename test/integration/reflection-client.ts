/**
 * A gRPC server-reflection client (grpc.reflection.v1) built from the
 * protocol's own .proto as @grpc/reflection ships it: lists services and
 * fetches the file descriptors that define a symbol, as grpcurl does.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { credentials, loadPackageDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

interface ReflectionResponse {
  listServicesResponse?: { service: { name: string }[] };
  fileDescriptorResponse?: { fileDescriptorProto: Buffer[] };
  errorResponse?: { errorCode: number; errorMessage: string };
}

export class ReflectionClient {
  private readonly client: any;

  constructor(address: string) {
    const pkg = createRequire(import.meta.url).resolve('@grpc/reflection/package.json');
    const dir = join(dirname(pkg), 'build', 'proto');
    const def = loadSync('grpc/reflection/v1/reflection.proto', { includeDirs: [dir] });
    const ns = loadPackageDefinition(def) as any;
    this.client = new ns.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  }

  private ask(request: Record<string, unknown>): Promise<ReflectionResponse> {
    return new Promise((resolve, reject) => {
      const call = this.client.ServerReflectionInfo();
      call.on('data', (r: ReflectionResponse) => {
        resolve(r);
        call.end();
      });
      call.on('error', reject);
      call.write(request);
    });
  }

  async listServices(): Promise<string[]> {
    const r = await this.ask({ listServices: '' });
    if (!r.listServicesResponse) throw new Error(`no listServicesResponse: ${JSON.stringify(r.errorResponse)}`);
    return r.listServicesResponse.service.map((s) => s.name).sort();
  }

  /** The serialized FileDescriptorProtos that define `symbol` (and their dependencies). */
  async fileContainingSymbol(symbol: string): Promise<Buffer[]> {
    const r = await this.ask({ fileContainingSymbol: symbol });
    if (!r.fileDescriptorResponse) throw new Error(`${symbol}: ${JSON.stringify(r.errorResponse)}`);
    return r.fileDescriptorResponse.fileDescriptorProto;
  }

  close(): void {
    this.client.close();
  }
}
