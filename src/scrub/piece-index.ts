/** A free place in the table; no entry is this number. */
const EMPTY = -0x80000000;
const INITIAL_CAPACITY = 1 << 10;

/**
 * Entries (32-bit integers) by a 32-bit key, any number per key: a table with open addressing
 * (linear probing) in two typed arrays. A thousand known tokens index some sixty thousand pieces;
 * a Map of lists holds them in about three times the memory, in a daemon that must stay small.
 */
export class PieceIndex {
  #keys = new Int32Array(INITIAL_CAPACITY);
  #entries = new Int32Array(INITIAL_CAPACITY).fill(EMPTY);
  /** 32 less the capacity's bits: a home is the top bits of a mixed key. */
  #shift = 32 - Math.log2(INITIAL_CAPACITY);
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** The place of the first entry under `key`, or -1; walk on with next(). */
  first(key: number): number {
    return this.#from(key, this.#home(key));
  }

  /** The place of the entry under `key` after the one at `place`, or -1. */
  next(key: number, place: number): number {
    return this.#from(key, (place + 1) & (this.#keys.length - 1));
  }

  entryAt(place: number): number {
    return this.#entries[place]!;
  }

  add(key: number, entry: number): void {
    if ((this.#size + 1) * 2 > this.#keys.length) this.#resize(this.#keys.length * 2);
    const mask = this.#keys.length - 1;
    let place = this.#home(key);
    while (this.#entries[place] !== EMPTY) place = (place + 1) & mask;
    this.#keys[place] = key;
    this.#entries[place] = entry;
    this.#size++;
  }

  delete(key: number, entry: number): void {
    let place = this.first(key);
    while (place !== -1 && this.#entries[place] !== entry) place = this.next(key, place);
    if (place === -1) return;
    // Shift back the entries after it that probing would no longer reach across the new gap.
    const mask = this.#keys.length - 1;
    let hole = place;
    for (let at = (hole + 1) & mask; this.#entries[at] !== EMPTY; at = (at + 1) & mask) {
      const home = this.#home(this.#keys[at]!);
      if (((at - home) & mask) >= ((at - hole) & mask)) {
        this.#keys[hole] = this.#keys[at]!;
        this.#entries[hole] = this.#entries[at]!;
        hole = at;
      }
    }
    this.#entries[hole] = EMPTY;
    this.#size--;
  }

  #from(key: number, place: number): number {
    const mask = this.#keys.length - 1;
    for (; this.#entries[place] !== EMPTY; place = (place + 1) & mask) if (this.#keys[place] === key) return place;
    return -1;
  }

  /** Where probing for `key` starts: the top bits of it mixed (Fibonacci hashing), as a rolling hash's low bits are poor. */
  #home(key: number): number {
    return Math.imul(key, 0x9e3779b1) >>> this.#shift;
  }

  #resize(capacity: number): void {
    const keys = this.#keys;
    const entries = this.#entries;
    this.#keys = new Int32Array(capacity);
    this.#entries = new Int32Array(capacity).fill(EMPTY);
    this.#shift = 32 - Math.log2(capacity);
    this.#size = 0;
    for (let place = 0; place < keys.length; place++) if (entries[place] !== EMPTY) this.add(keys[place]!, entries[place]!);
  }
}
