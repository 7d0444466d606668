import type { ISecret } from 'kubernetes-models/v1/Secret';

import { type SharedRequest, shareRequest } from '../../common/shared-request.js';

/** How long after it was requested a listing may still answer a Secret never read since (see SecretListings). */
export const LISTING_FRESH_MS = 5_000;
/** After a LIST failed (other than 403: too large, a server error), reads go by name this long before listing again. */
export const LISTING_RETRY_MS = 60_000;
/**
 * After a LIST was refused (403), reads go by name this long before asking again: a grant of `list`
 * made later takes effect without a restart, for one refused request per namespace in this time.
 */
export const LISTING_FORBIDDEN_RETRY_MS = 15 * 60_000;

export interface SecretListingsOptions {
  /** One LIST of the namespace's Secrets that carry our label; `forbidden` for a 403. */
  list(namespace: string, signal: AbortSignal): Promise<ISecret[] | 'forbidden'>;
  /** Once per namespace whose LIST was refused: its Secrets are read by name, asking again after LISTING_FORBIDDEN_RETRY_MS. */
  onForbidden(namespace: string): void;
  /** A LIST that failed otherwise: its reads go by name for LISTING_RETRY_MS. */
  onListFailed?(namespace: string, error: unknown): void;
  /** Monotonic milliseconds (performance.now()); tests move it. */
  now?: () => number;
}

/** A Secret as a listing or our own apply's answer showed it: `seq` orders it among everything this client saw. */
interface Seen {
  secret: ISecret;
  seq: number;
  at: number;
}

interface Namespace {
  /** A LIST was refused (403) here: said once (onForbidden), whatever later LISTs answer. */
  forbiddenSaid: boolean;
  seen: Map<string, Seen>;
  /** Per Secret, the `seq` when this client last answered for it, read it by name or wrote it. */
  answered: Map<string, number>;
  /** The newest listing merged: an older one answering late must not bring back what it had. */
  merged: number;
  /** Until when reads go by name after a failed or refused LIST (monotonic ms). */
  listAgainAt: number;
  /** The newest listing in flight; one a read could not join may still be out, counted in `outstanding`. */
  flight?: { seq: number; at: number; request: SharedRequest<'listed' | 'forbidden' | 'failed'> };
  outstanding: number;
  pruning?: ReturnType<typeof setTimeout>;
}

/**
 * The Secrets this sink client last saw in each namespace, from one LIST by our label, so that a
 * check reads a namespace with one request instead of a GET per Secret: reads scale with
 * destinations, not tokens.
 *
 * The freshness rule: a listing answers a read of a Secret only if it was requested after this
 * client last answered for that Secret (or read it by name, or wrote it), and at most
 * LISTING_FRESH_MS after it was requested.
 *
 * - The first half is the round boundary. A read carries no round (the sink API gives it none),
 *   and the daemon checks each token on its own schedule, as often as every second: a plain time
 *   window would let checks within it see a deleted Secret still there. Per Secret instead, the
 *   next check of a token always gets a listing (or a GET) that left after its previous check read,
 *   so drift between two checks is seen by the second, however soon it comes; yet the reads of many
 *   tokens checked side by side (a `once`, `plan` or `status` run, a daemon tick) share one listing.
 * - The second half bounds how old a first read's answer may be: a state from at most 5 s before
 *   the read, as if its GET had taken 5 s. A change inside that window is seen by the next check,
 *   never hidden. 5 s covers a run's reads of thousands of tokens with a listing or two, and keeps
 *   the other Secrets' data (the listing holds it) in memory no longer than that.
 *
 * Reads that must wait share the listing in flight when it qualifies (requested after the
 * Secret's last answer, and less than LISTING_FRESH_MS ago), else start one: a hundred reads at
 * once make one LIST. An entry answers one read and is dropped: the next read of that Secret needs
 * a newer listing anyway, and a secret no read can use is not kept. Our own write counts as an
 * answer, like a read by name: only a listing requested after it can say what the Secret holds,
 * so a Secret deleted right after we wrote it is found missing by the next read. A Secret not in
 * the listing (missing, or not labelled ours: another tool's, one to adopt) gets no answer here;
 * the caller reads it by name, as before. So does every Secret of a namespace whose LIST failed
 * (too large, a server error) for the next LISTING_RETRY_MS, instead of failing the reads.
 */
export class SecretListings {
  readonly #options: SecretListingsOptions;
  readonly #now: () => number;
  readonly #namespaces = new Map<string, Namespace>();
  /** Orders every listing sent, every write answered and every answer given. */
  #seq = 0;

  constructor(options: SecretListingsOptions) {
    this.#options = options;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The Secret from a listing; undefined when no listing can say (not in it, or list forbidden): read it by name. */
  async lookup(namespace: string, name: string, signal?: AbortSignal): Promise<ISecret | undefined> {
    const ns = this.#namespace(namespace);
    if (this.#now() < ns.listAgainAt) return undefined;
    const floor = ns.answered.get(name) ?? 0;
    const held = ns.seen.get(name);
    if (held && held.seq > floor && this.#now() - held.at < LISTING_FRESH_MS) return this.#answer(ns, name, held);

    let flight = ns.flight;
    const stale = (f: NonNullable<Namespace['flight']>) => f.seq <= floor || f.request.aborted || this.#now() - f.at >= LISTING_FRESH_MS;
    if (!flight || stale(flight)) flight = this.#startListing(namespace, ns);
    const outcome = await flight.request.join(signal);
    if (outcome !== 'listed') return undefined;
    // Requested after this Secret's last answer, just answered: as new as a GET would be.
    const listed = ns.seen.get(name);
    return listed && listed.seq >= flight.seq ? this.#answer(ns, name, listed) : undefined;
  }

  /** A GET by name answered: no listing requested before it may answer for this Secret any more. */
  readByName(namespace: string, name: string): void {
    const ns = this.#namespace(namespace);
    ns.seen.delete(name);
    ns.answered.set(name, this.#seq);
  }

  /** Our apply was answered: no listing requested before it may answer for this Secret any more. */
  wrote(namespace: string, name: string): void {
    this.readByName(namespace, name);
  }

  close(): void {
    for (const ns of this.#namespaces.values()) {
      clearTimeout(ns.pruning);
      ns.flight?.request.abort();
    }
    this.#namespaces.clear();
  }

  #namespace(namespace: string): Namespace {
    let ns = this.#namespaces.get(namespace);
    if (!ns)
      this.#namespaces.set(
        namespace,
        (ns = { forbiddenSaid: false, listAgainAt: 0, seen: new Map(), answered: new Map(), merged: 0, outstanding: 0 }),
      );
    return ns;
  }

  #answer(ns: Namespace, name: string, seen: Seen): ISecret {
    ns.answered.set(name, this.#seq);
    ns.seen.delete(name);
    return seen.secret;
  }

  #startListing(namespace: string, ns: Namespace): NonNullable<Namespace['flight']> {
    const seq = ++this.#seq;
    const at = this.#now();
    ns.outstanding++;
    const request = shareRequest(async (signal) => {
      try {
        let items: ISecret[] | 'forbidden';
        try {
          items = await this.#options.list(namespace, signal);
        } catch (error) {
          if ((error as Error)?.name === 'AbortError') throw error;
          ns.listAgainAt = this.#now() + LISTING_RETRY_MS;
          this.#options.onListFailed?.(namespace, error);
          return 'failed' as const;
        }
        if (items !== 'forbidden') {
          this.#merge(ns, seq, at, items);
          return 'listed' as const;
        }
        ns.listAgainAt = this.#now() + LISTING_FORBIDDEN_RETRY_MS;
        ns.seen.clear();
        if (!ns.forbiddenSaid) {
          ns.forbiddenSaid = true;
          this.#options.onForbidden(namespace);
        }
        return 'forbidden' as const;
      } finally {
        ns.outstanding--;
        if (ns.flight?.seq === seq) ns.flight = undefined;
      }
    });
    const flight = { seq, at, request };
    ns.flight = flight;
    return flight;
  }

  #merge(ns: Namespace, seq: number, at: number, items: ISecret[]): void {
    if (seq < ns.merged) return;
    ns.merged = seq;
    // Not in this listing: gone, or no longer labelled ours; unless we wrote it after the listing left.
    for (const [name, held] of ns.seen) if (held.seq < seq) ns.seen.delete(name);
    for (const secret of items) {
      const name = secret.metadata?.name;
      if (!name) continue;
      const held = ns.seen.get(name);
      if (!held || held.seq < seq) ns.seen.set(name, { secret, seq, at });
    }
    this.#schedulePrune(ns);
  }

  /**
   * Drops what no read may use any more, when the oldest entry expires: other Secrets' data stays
   * in memory no longer than LISTING_FRESH_MS after its listing was requested.
   */
  #schedulePrune(ns: Namespace): void {
    if (ns.pruning) return;
    let oldest = Infinity;
    for (const held of ns.seen.values()) oldest = Math.min(oldest, held.at);
    const delay = oldest === Infinity ? LISTING_FRESH_MS : Math.max(0, oldest + LISTING_FRESH_MS - this.#now());
    ns.pruning = setTimeout(() => {
      ns.pruning = undefined;
      const now = this.#now();
      for (const [name, held] of ns.seen) if (now - held.at >= LISTING_FRESH_MS) ns.seen.delete(name);
      if (ns.seen.size > 0) this.#schedulePrune(ns);
      // With nothing held and nothing in flight, every future listing is newer than every answer given.
      else if (ns.outstanding === 0) ns.answered.clear();
    }, delay);
    // Never what keeps a run's process alive.
    ns.pruning.unref();
  }
}
