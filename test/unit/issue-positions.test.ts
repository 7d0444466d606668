import { describe, expect, it } from 'vitest';

import { policyPathSegments, withPositions } from '../../src/config/issue-positions.js';

const TEXT = [
  'version: 1', // 1
  'defaults:', // 2
  '  sinks: &shared', // 3
  '    - type: file', // 4
  '      path: shared.token', // 5
  'tokens:', // 6
  '  - name: a', // 7
  '    sinks: *shared', // 8
  '  - { name: b, id: 7 }', // 9
  '',
].join('\n');

const placed = (path: string) => withPositions([{ path, message: 'm' }], TEXT)[0];

describe('where in the policy text a problem is', () => {
  it('places a mapping entry at its key and a list item at itself', () => {
    expect(placed('tokens[1].id')).toEqual({ path: 'tokens[1].id', message: 'm', line: 9, column: 16 });
    expect(placed('tokens[0]')).toMatchObject({ line: 7, column: 5 });
    expect(placed('(top level)')).toMatchObject({ line: 1, column: 1 });
  });

  it('follows an alias to where its value is written', () => {
    expect(placed('tokens[0].sinks[0].path')).toMatchObject({ line: 5, column: 7 });
  });

  it('places a missing entry at the nearest one around it, a note after the path set aside', () => {
    expect(placed('tokens[0].id')).toMatchObject({ line: 7, column: 5 });
    expect(placed('tokens[1].renewBefore (from defaults)')).toMatchObject({ line: 9, column: 5 });
  });

  it('gives no place to what is not in the policy, nor replaces the parser’s', () => {
    for (const path of ['env.ROTATOR_API_URL', 'env', '--dotenv x.env', '/etc/rotation.yaml', 'notifications[0].urlFrom']) {
      expect(placed(path)).toEqual({ path, message: 'm' });
    }
    const syntax = { path: '/etc/rotation.yaml:3:4', message: 'm', line: 3, column: 4 };
    expect(withPositions([syntax], TEXT)).toEqual([syntax]);
  });

  it('reads the paths the policy checks write', () => {
    expect(policyPathSegments('tokens[12].sinks[0].headers.X-Api-Key')).toEqual(['tokens', 12, 'sinks', 0, 'headers', 'X-Api-Key']);
    expect(policyPathSegments('defaults.reload[0].urlFrom')).toEqual(['defaults', 'reload', 0, 'urlFrom']);
    expect(policyPathSegments('tokens[1].name with spaces')).toBeUndefined();
  });
});
