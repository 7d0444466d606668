import { describe, expect, it } from 'vitest';

import { modelOf, modelProblems } from '../helpers/kubernetes-models.js';

/** The strict check of test/helpers/kubernetes-models.ts, on objects with known defects. */

const deployment = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'app', namespace: 'apps', labels: { 'any.example/label': 'x' }, annotations: { note: 'free text' } },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'app' } },
    template: {
      metadata: { labels: { app: 'app' } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'example/app:1',
            ports: [{ name: 'http', containerPort: 8080 }],
            resources: { limits: { memory: '64Mi' } },
          },
        ],
        volumes: [{ name: 'scratch', emptyDir: { medium: 'Memory' } }],
      },
    },
  },
});

describe('modelProblems', () => {
  it('accepts a valid object, with free keys where the schema has a map (labels, annotations, resources)', async () => {
    expect(await modelProblems(deployment())).toEqual([]);
    const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { 'any-file.json': '{}' } };
    expect(await modelProblems(configMap)).toEqual([]);
  });

  it('names a misspelt field that the model alone accepts, at any depth', async () => {
    const object = deployment();
    Object.assign(object.spec.template.spec.containers[0]!, { imagePullPolcy: 'Always' });
    Object.assign(object, { specs: {} });
    const Model = await modelOf(object);
    expect(() => Model.prototype.validate.call(object)).not.toThrow(); // why the strict check exists
    expect(await modelProblems(object)).toEqual([
      'Deployment apps/app: unknown field specs',
      'Deployment apps/app: unknown field spec.template.spec.containers.0.imagePullPolcy',
    ]);
  });

  it("reports the model's own validation error", async () => {
    const object = deployment();
    Object.assign(object.spec, { replicas: 'two' });
    expect(await modelProblems(object)).toEqual([expect.stringMatching(/^Deployment apps\/app: data\/spec\/replicas must be integer/)]);
  });

  it("checks the Prometheus Operator's kinds with their models", async () => {
    const rule = {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'r' },
      spec: { groups: [{ name: 'g', rules: [{ alert: 'A', expresion: 'up == 0', labels: { severity: 'warning' } }] }] },
    };
    expect(await modelProblems(rule)).toEqual([
      expect.stringMatching(/^PrometheusRule \/r: data\/spec\/groups\/0\/rules\/0 must have required property expr$/),
      'PrometheusRule /r: unknown field spec.groups.0.rules.0.expresion',
    ]);
  });

  it('refuses a kind it has no model for, rather than passing it unchecked', async () => {
    await expect(modelProblems({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } })).rejects.toThrow(
      /no model for example.com\/v1 Widget/,
    );
  });
});
