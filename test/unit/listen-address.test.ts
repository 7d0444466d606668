import { describe, expect, it } from 'vitest';

import { parseListen } from '../../src/cli/commands/daemon.js';

describe('--listen', () => {
  it.each([
    ['127.0.0.1:9464', { host: '127.0.0.1', port: 9464 }],
    ['[::]:9464', { host: '::', port: 9464 }],
    // as Prometheus exporters read it: every interface
    [':9464', { host: '0.0.0.0', port: 9464 }],
    // a bare port keeps the safe default host
    ['9470', { host: '127.0.0.1', port: 9470 }],
    [' 9470 ', { host: '127.0.0.1', port: 9470 }],
  ])('reads %j', (text, expected) => {
    expect(parseListen(text)).toEqual(expected);
  });

  it.each(['', ':', 'host:', '99999', ':70000', 'a:b:9464', 'localhost'])('refuses %j', (text) => {
    expect(parseListen(text)).toBeUndefined();
  });
});
