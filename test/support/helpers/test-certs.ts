/**
 * Throwaway certificates made with the real openssl CLI for the transport and
 * identity tests: EC P-256 keys, one-day validity, files named `<name>.key`,
 * `<name>.crt` in one temporary folder.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export class TestCerts {
  readonly dir: string;

  constructor(prefix: string) {
    this.dir = mkdtempSync(join(tmpdir(), prefix));
  }

  file(name: string): string {
    return join(this.dir, name);
  }

  /** A self-signed CA: `<name>.key`, `<name>.crt`. */
  ca(name: string): void {
    this.openssl([
      'req',
      '-x509',
      ...EC,
      '-keyout',
      `${name}.key`,
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-subj',
      `/CN=${name}`,
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
  }

  /** A leaf signed by `ca`, with the X.509 extensions in `ext` (openssl extfile syntax). */
  leaf(name: string, ca: string, ext: string, subject = `/CN=${name}`): void {
    this.openssl(['req', '-new', ...EC, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', subject]);
    writeFileSync(this.file(`${name}.ext`), ext);
    this.openssl([
      'x509',
      '-req',
      '-in',
      `${name}.csr`,
      '-CA',
      `${ca}.crt`,
      '-CAkey',
      `${ca}.key`,
      '-CAcreateserial',
      '-out',
      `${name}.crt`,
      '-days',
      '1',
      '-extfile',
      `${name}.ext`,
    ]);
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private openssl(args: string[]): void {
    execFileSync('openssl', args, { cwd: this.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}
