import { SinkError } from '../../errors.js';
import { remoteText } from '../../http/remote-text.js';

/** The gRPC status codes the client tells apart (google.rpc.Code): stable numbers on the wire. */
export const Code = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

/** What google-gax gives for a failed call: the gRPC status and the google.rpc.ErrorInfo it carried. */
export interface GoogleCallError {
  name?: string;
  code?: unknown;
  details?: unknown;
  message?: unknown;
  reason?: unknown;
  domain?: unknown;
  errorInfoMetadata?: unknown;
}

export function statusOf(error: unknown): number | undefined {
  const code = (error as GoogleCallError | null)?.code;
  return typeof code === 'number' ? code : undefined;
}

/** The server's own words, masked and cut short: it is a peer's text. */
export function serverText(error: unknown): string {
  const e = error as GoogleCallError | null;
  const text = typeof e?.details === 'string' && e.details ? e.details : typeof e?.message === 'string' ? e.message : String(error);
  return remoteText(text);
}

function errorInfo(error: unknown): { reason?: string; metadata: Record<string, string> } {
  const e = error as GoogleCallError | null;
  const metadata = e?.errorInfoMetadata && typeof e.errorInfoMetadata === 'object' ? (e.errorInfoMetadata as Record<string, string>) : {};
  return { ...(typeof e?.reason === 'string' ? { reason: e.reason } : {}), metadata };
}

/**
 * A failed call's cause as it may be kept: its name, status, reason and masked message, never the
 * call's options nor anything a credential file held.
 */
function safeCause(error: unknown): Error {
  const e = error as GoogleCallError | null;
  const cause = new Error(serverText(error));
  cause.name = typeof e?.name === 'string' ? e.name : 'Error';
  return Object.assign(cause, {
    ...(statusOf(error) !== undefined ? { code: statusOf(error) } : {}),
    ...(typeof e?.reason === 'string' ? { reason: e.reason } : {}),
  });
}

export interface CallSite {
  /** `gcp-secret-manager projects/p/secrets/s`: every message starts from it. */
  describe: string;
  /** What was being done, for the message: `cannot add a version to …`. */
  doing: string;
  /** The IAM permission the call needs, named when the service does not say. */
  permission: string;
  /** Where that permission is checked: the secret, or the project when creating one. */
  resource: string;
  project: string;
  endpoint: string;
  /** The identity the credentials stand for, when known: who needs the grant. */
  principal?: string | undefined;
}

/** A failed Secret Manager call as an error an operator can act on; an abort stays an abort. */
export function sinkErrorFor(site: CallSite, error: unknown): Error {
  if ((error as Error | null)?.name === 'AbortError' || error instanceof SinkError) return error as Error;
  const cause = safeCause(error);
  const fail = (what: string) => new SinkError(`${site.doing} ${site.describe}: ${what}`, { cause });
  const { reason, metadata } = errorInfo(error);
  const who = site.principal ? ` to ${site.principal}` : ' to the credentials in use';
  switch (statusOf(error)) {
    case Code.PERMISSION_DENIED: {
      if (reason === 'SERVICE_DISABLED') {
        const consumer = metadata['consumer']?.replace(/^projects\//, '') ?? site.project;
        return fail(
          `the Secret Manager API is not enabled in project ${consumer}: ` +
            `enable it with \`gcloud services enable secretmanager.googleapis.com --project ${consumer}\``,
        );
      }
      const permission = metadata['permission'] ?? site.permission;
      return fail(
        `permission ${permission} denied on ${site.resource} (or it does not exist): ` +
          `grant ${permission}${who} on ${site.resource}, for instance with the custom role in docs/sinks/gcp-secret-manager.md`,
      );
    }
    case Code.UNAUTHENTICATED:
      return fail(
        `Secret Manager refused the credentials (${serverText(error)}): check the service account key GOOGLE_APPLICATION_CREDENTIALS names, ` +
          `or the Kubernetes service account's Workload Identity binding`,
      );
    case Code.NOT_FOUND:
      return fail(`not found (${serverText(error)})`);
    case Code.FAILED_PRECONDITION:
    case Code.INVALID_ARGUMENT:
    case Code.ALREADY_EXISTS:
    case Code.ABORTED:
      return fail(`Secret Manager refused it: ${serverText(error)}`);
    case Code.UNAVAILABLE:
    case Code.DEADLINE_EXCEEDED:
      return fail(`cannot reach Secret Manager at ${site.endpoint} (${serverText(error)})`);
    case undefined:
      return fail(credentialProblem(error));
    default:
      return fail(serverText(error));
  }
}

/**
 * A failure before any call was answered: mostly Application Default Credentials that could not be
 * found or loaded. Never the raw text of a credential file's parse error: it may quote the file.
 */
function credentialProblem(error: unknown): string {
  const e = error as (GoogleCallError & { code?: unknown }) | null;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (/default credentials/i.test(message))
    return (
      'no Google credentials found: set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, ' +
      'run `gcloud auth application-default login`, or run on GKE or Compute Engine with a service account (Workload Identity)'
    );
  if (typeof e?.code === 'string' && /^E[A-Z]+$/.test(e.code))
    return `cannot read the Google credentials file GOOGLE_APPLICATION_CREDENTIALS names (${e.code}): check the path and its permissions`;
  if (e?.name === 'SyntaxError') return 'cannot load the Google credentials: the credentials file is not valid JSON';
  return `cannot use the Google credentials or reach Secret Manager (${serverText(error)})`;
}
