/**
 * The control plane's certificates (the lab's and the test harness's), made with the real `openssl` CLI
 * (argument arrays only): one CA, the apiserver's serving certificate, client
 * certificates for each identity the harness uses, and the service-account
 * signing key. Everything lives in the harness's own directory.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  serverCert: string;
  serverKey: string;
  saKey: string;
  saPub: string;
}

export interface ClientCert {
  cert: string;
  key: string;
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * A CA, the apiserver's serving cert for 127.0.0.1/localhost/kubernetes.default.svc
 * (and `extraIps`, e.g. the lab apiserver's address on its fabric), and the SA key pair.
 */
export function createPki(dir: string, extraIps: readonly string[] = []): Pki {
  const p = (f: string): string => join(dir, f);
  openssl([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p('ca.key'),
    '-out',
    p('ca.crt'),
    '-days',
    '2',
    '-subj',
    '/CN=cni-bench-harness-ca',
  ]);
  const ext = p('server.ext');
  writeFileSync(
    ext,
    [
      'basicConstraints=CA:FALSE',
      'keyUsage=digitalSignature,keyEncipherment',
      'extendedKeyUsage=serverAuth',
      `subjectAltName=IP:127.0.0.1,${extraIps.map((ip) => `IP:${ip},`).join('')}DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc`,
      '',
    ].join('\n'),
  );
  sign(dir, 'server', '/CN=kube-apiserver', ext);
  openssl(['genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048', '-out', p('sa.key')]);
  openssl(['pkey', '-in', p('sa.key'), '-pubout', '-out', p('sa.pub')]);
  return {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    serverCert: p('server.crt'),
    serverKey: p('server.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
  };
}

/** A client certificate for user `cn` in groups `orgs` (O= fields), signed by the harness CA. */
export function createClientCert(pki: Pki, name: string, cn: string, orgs: string[] = []): ClientCert {
  const ext = join(pki.dir, `${name}.ext`);
  writeFileSync(
    ext,
    'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n',
  );
  const subject = `${orgs.map((o) => `/O=${o}`).join('')}/CN=${cn}`;
  sign(pki.dir, name, subject, ext);
  return { cert: join(pki.dir, `${name}.crt`), key: join(pki.dir, `${name}.key`) };
}

function sign(dir: string, name: string, subject: string, extFile: string): void {
  const p = (f: string): string => join(dir, f);
  openssl([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    p(`${name}.key`),
    '-out',
    p(`${name}.csr`),
    '-subj',
    subject,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    p(`${name}.csr`),
    '-CA',
    p('ca.crt'),
    '-CAkey',
    p('ca.key'),
    '-CAcreateserial',
    '-out',
    p(`${name}.crt`),
    '-days',
    '2',
    '-extfile',
    extFile,
  ]);
}
