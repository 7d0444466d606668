/**
 * One request as the double saw it, for asserting what a client did (how many writes, which patch
 * type, which field manager). Never a body or a header value, so never a secret.
 */
export interface RecordedKubeRequest {
  method: string;
  /** The URL path, without the query. */
  path: string;
  /** The query parameters (a repeated one keeps its last value). */
  query: Record<string, string>;
  contentType?: string;
  fieldManager?: string;
  status: number;
}
