import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { CLOUD_PLATFORM, type Identities } from './identities.js';

/** One request to the metadata server: never a header value or a body. */
export interface RecordedHttpRequest {
  method: string;
  path: string;
  status: number;
}

/** The service account a GKE pod's Kubernetes service account is bound to (Workload Identity). */
export interface WorkloadIdentity {
  email: string;
  projectId: string;
  numericProjectId: string;
}

/**
 * The GCE/GKE metadata server on loopback, plain HTTP as the real one is reached
 * (`GCE_METADATA_HOST` points google-auth-library and gcp-metadata at it): Workload Identity's
 * tokens for the Google service account a pod's Kubernetes service account is bound to.
 */
export async function startGoogleHttp(identities: Identities, workload: () => WorkloadIdentity | undefined) {
  const requests: RecordedHttpRequest[] = [];

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<number> {
    const url = new URL(request.url ?? '/', 'http://metadata.google.internal');
    if (!url.pathname.startsWith('/computeMetadata/v1/')) return send(response, 404, 'text/html', 'Not Found');
    // The metadata server answers only requests that say they mean it (SSRF protection).
    if (request.headers['metadata-flavor'] !== 'Google' || request.headers['x-forwarded-for'])
      return send(response, 403, 'text/html', 'Missing required header: Metadata-Flavor');
    const path = url.pathname.slice('/computeMetadata/v1/'.length).replace(/\/$/, '');
    const bound = workload();
    if (path === 'instance' || path === '') return send(response, 200, 'application/text', 'attributes/\nservice-accounts/\n');
    if (path === 'universe/universe-domain') return send(response, 200, 'application/text', 'googleapis.com');
    if (!bound) return send(response, 404, 'text/html', 'Not Found');
    switch (path) {
      case 'project/project-id':
        return send(response, 200, 'application/text', bound.projectId);
      case 'project/numeric-project-id':
        return send(response, 200, 'application/text', bound.numericProjectId);
      case 'instance/service-accounts/default/email':
        return send(response, 200, 'application/text', bound.email);
      case 'instance/service-accounts/default/token': {
        const scopes = url.searchParams.get('scopes');
        if (scopes && !scopes.split(',').includes(CLOUD_PLATFORM)) return send(response, 400, 'text/html', 'invalid scopes');
        const { token, expiresIn } = identities.issueAccessToken(bound.email);
        return send(
          response,
          200,
          'application/json',
          JSON.stringify({ access_token: token, expires_in: expiresIn, token_type: 'Bearer' }),
        );
      }
      default:
        return send(response, 404, 'text/html', 'Not Found');
    }
  }

  const server: Server = createServer((request, response) => {
    void handle(request, response)
      .catch(() => send(response, 500, 'text/html', 'Internal Server Error'))
      .then((status) => requests.push({ method: request.method ?? 'GET', path: new URL(request.url ?? '/', 'http://x').pathname, status }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    /** For GCE_METADATA_HOST. */
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(response: ServerResponse, status: number, contentType: string, body: string): number {
  response.writeHead(status, { 'content-type': contentType, 'metadata-flavor': 'Google', 'content-length': Buffer.byteLength(body) });
  response.end(body);
  return status;
}
