import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseNftRuleset, parseServiceIpsListing } from '../../../../agent/samplers/nft.js';
import { fixture } from '../../../support/helpers/fixtures.js';

// Expected counts follow from what was loaded (see test/fixtures/README.md): the lab's kube-proxy
// v1.37 base objects (15 chains, 22 rules, 3 sets, 5 maps), default/web with 2 endpoints and 3 dummy
// Services with 4 endpoints each, one chain with one DNAT rule per Service (no per-endpoint chains):
// chains 15 + 4 = 19; rules 22 + 4 = 26.
test('nft -j list ruleset of the kube-proxy nftables layout: counts and the service-ips map', () => {
  const s = parseNftRuleset(fixture('nft-list-ruleset-kube-proxy.json'));
  assert.deepEqual(s.tables, [{ family: 'ip', name: 'kube-proxy' }]);
  assert.equal(s.chains, 19);
  assert.equal(s.rules, 26);
  assert.deepEqual(s.rulesByTable, { 'ip kube-proxy': 26 });
  assert.equal(s.serviceIps, 4);
  const byName = Object.fromEntries(s.sets.map((x) => [x.name, x]));
  assert.equal(byName['cluster-ips']?.elements, 4);
  assert.equal(byName['cluster-ips']?.kind, 'set');
  assert.equal(byName['nodeport-ips']?.elements, 1);
  assert.equal(byName['hairpin-connections']?.elements, 0);
  assert.equal(s.sets.filter((x) => x.kind === 'set').length, 3);
  assert.equal(s.sets.filter((x) => x.kind === 'map').length, 5);
  assert.equal(byName['no-endpoint-services']?.elements, 0);
  assert.equal(byName['service-ips']?.kind, 'map');
});

test('an empty ruleset has no tables and no service-ips map (not zero elements)', () => {
  const s = parseNftRuleset(fixture('nft-list-ruleset-empty.json'));
  assert.equal(s.tables.length, 0);
  assert.equal(s.rules, 0);
  assert.equal(s.serviceIps, undefined);
});

test('truncated or foreign output is an error naming nft, never an empty ruleset', () => {
  assert.throws(
    () => parseNftRuleset(fixture('nft-list-ruleset-truncated.json')),
    /nft: cannot parse output.*invalid JSON/s,
  );
  assert.throws(() => parseNftRuleset('{"tables": []}'), /nft: .*"nftables" array/s);
  assert.throws(() => parseNftRuleset('{"nftables": [{"rule": {"family": "ip"}}]}'), /item 0 \(rule\) lacks "table"/);
  assert.throws(() => parseNftRuleset(''), /nft/);
});

test("kube-proxy's service-ips map listed on its own: its count, absent when nft says it does not exist", () => {
  assert.equal(
    parseServiceIpsListing({ exitCode: 0, stdout: fixture('nft-list-map-service-ips.json'), stderr: '' }),
    4,
  );
  assert.equal(
    parseServiceIpsListing({ exitCode: 1, stdout: '', stderr: fixture('nft-list-map-missing.stderr') }),
    undefined,
  );
  assert.throws(
    () => parseServiceIpsListing({ exitCode: 1, stdout: '', stderr: 'Error: Operation not permitted' }),
    /nft: .*exited with 1/s,
  );
  assert.throws(
    () => parseServiceIpsListing({ exitCode: 0, stdout: fixture('nft-list-ruleset-empty.json'), stderr: '' }),
    /does not contain that map/,
  );
  assert.throws(
    () => parseServiceIpsListing({ exitCode: 0, stdout: fixture('nft-list-ruleset-truncated.json'), stderr: '' }),
    /invalid JSON/,
  );
});
