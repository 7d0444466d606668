/**
 * One request as the double saw it, for asserting what a client did (how many writes, which patch
 * type, which field manager). Never a body or a header value, so never a secret.
 */
export interface RecordedKubeRequest {
  method: string;
  /**
   * The Kubernetes verb, as the API server's audit log has it: `get` and `list` tell a read of one
   * object from a read of a collection, which the method (GET for both) does not. A request that is
   * not for a resource (discovery, /version) has its lowercased method.
   */
  verb: string;
  /** The URL path, without the query. */
  path: string;
  /** The query parameters (a repeated one keeps its last value). */
  query: Record<string, string>;
  contentType?: string;
  fieldManager?: string;
  status: number;
}
