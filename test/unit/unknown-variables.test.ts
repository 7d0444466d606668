import { describe, expect, it } from 'vitest';

import { unknownRotatorVariables } from '../../src/config/unknown-variables.js';

const names = (environment: string[], referenced: string[] = []) =>
  unknownRotatorVariables({ environment }, new Set(referenced)).map((u) => [u.name, u.meant]);

describe('unknownRotatorVariables', () => {
  it('names a typo with the variable it most likely meant, and leaves read names and referenced ones alone', () => {
    expect(
      names(
        ['ROTATOR_STATE_BACKED', 'ROTATOR_API_URL', 'ROTATOR_STATE_KEY_FILE', 'ROTATOR_SLACK_WEBHOOK', 'HOME'],
        ['ROTATOR_SLACK_WEBHOOK'],
      ),
    ).toEqual([['ROTATOR_STATE_BACKED', 'ROTATOR_STATE_BACKEND']]);
  });

  it('leaves alone the service links Kubernetes sets for Services named rotator and rotator-metrics', () => {
    const links = [
      'ROTATOR_SERVICE_HOST',
      'ROTATOR_SERVICE_PORT',
      'ROTATOR_SERVICE_PORT_METRICS',
      'ROTATOR_PORT',
      'ROTATOR_PORT_9464_TCP',
      'ROTATOR_PORT_9464_TCP_PROTO',
      'ROTATOR_PORT_9464_TCP_PORT',
      'ROTATOR_PORT_9464_TCP_ADDR',
      'ROTATOR_METRICS_SERVICE_HOST',
      'ROTATOR_METRICS_PORT_80_TCP',
    ];
    expect(names([...links, 'ROTATOR_LOG_LEVL'])).toEqual([['ROTATOR_LOG_LEVL', 'ROTATOR_LOG_LEVEL']]);
  });

  it('still warns of a name ending in _PORT when no Service set a host for it', () => {
    expect(names(['ROTATOR_LISTEN_PORT']).map(([name]) => name)).toEqual(['ROTATOR_LISTEN_PORT']);
  });
});
