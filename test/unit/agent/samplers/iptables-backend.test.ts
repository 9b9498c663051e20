import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseIptablesBackend } from '../../../../agent/samplers/iptables-backend.js';
import { fixture } from '../../../support/helpers/fixtures.js';

test("kubelet's hint chain decides: legacy node", () => {
  const c = chooseIptablesBackend(
    fixture('iptables-nft-save-beside-legacy.txt'),
    fixture('iptables-legacy-save-hint.txt'),
  );
  assert.equal(c.backend, 'legacy');
  assert.match(c.reason, /canary/);
});

test("kubelet's hint chain decides: nft node", () => {
  const c = chooseIptablesBackend(
    fixture('iptables-nft-save-hint.txt'),
    fixture('iptables-legacy-save-beside-nft.txt'),
  );
  assert.equal(c.backend, 'nft');
  assert.match(c.reason, /canary chain in nft/);
});

test('without a hint the backend with more rules wins; ties and missing tools go to nft', () => {
  assert.equal(chooseIptablesBackend('', fixture('iptables-save-kube-proxy-legacy.txt')).backend, 'legacy');
  assert.equal(chooseIptablesBackend(fixture('iptables-save-kube-proxy-nft.txt'), '').backend, 'nft');
  assert.equal(chooseIptablesBackend('', '').backend, 'nft');
  assert.equal(chooseIptablesBackend(undefined, undefined).backend, 'nft');
  assert.equal(chooseIptablesBackend(undefined, fixture('iptables-save-kube-proxy-legacy.txt')).backend, 'legacy');
});
