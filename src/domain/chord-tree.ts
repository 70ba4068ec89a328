/**
 * The nearest points on the sphere, by a static k-d tree over their unit vectors. The straight line
 * through the Earth between two points (the chord) grows with the great-circle distance between them,
 * so the nearest by chord are the nearest by great circle, and the tree finds them with three
 * multiplications per point it looks at, where a walk over longitudes and latitudes needs
 * trigonometry at every node. Nothing is special at the antimeridian or the poles: on the unit sphere
 * they are places like any other. Built once from every point, never updated (./geo-index.ts builds
 * one per registry, when first asked for the nearest N).
 */

/** Points per leaf, looked at one by one. */
const LEAF = 16;

const RAD = Math.PI / 180;

export class ChordTree {
  /** x, y, z of each slot's point on the unit sphere. */
  private readonly coords: Float64Array;
  /** The caller's position of the point in each slot. */
  private readonly slots: Int32Array;
  // A query's state (queries are synchronous: one at a time).
  private qx = 0;
  private qy = 0;
  private qz = 0;
  private want = 0;
  private size = 0;
  /** A max-heap of the nearest found so far: squared chords, and their slots. */
  private heapChord = new Float64Array(0);
  private heapSlot = new Int32Array(0);

  /** The tree over points given by position (`lats[i]`, `lons[i]`, degrees). */
  constructor(lats: ArrayLike<number>, lons: ArrayLike<number>) {
    const n = lats.length;
    this.coords = new Float64Array(n * 3);
    this.slots = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const [x, y, z] = unitVector(lats[i]!, lons[i]!);
      this.coords[i * 3] = x;
      this.coords[i * 3 + 1] = y;
      this.coords[i * 3 + 2] = z;
      this.slots[i] = i;
    }
    this.split(0, n - 1, 0);
  }

  /**
   * The positions of the `count` points nearest to (lat, lon), nearest first by chord. Among points at
   * the same distance at the cut, which are taken is not defined: a caller that cares asks for one more
   * and looks at the last (./geo-index.ts `nearest`).
   */
  nearest(lat: number, lon: number, count: number): number[] {
    const n = this.slots.length;
    const want = Math.min(count, n);
    if (want <= 0) return [];
    [this.qx, this.qy, this.qz] = unitVector(lat, lon);
    this.want = want;
    this.size = 0;
    if (this.heapChord.length < want) {
      this.heapChord = new Float64Array(want);
      this.heapSlot = new Int32Array(want);
    }
    this.visit(0, n - 1, 0);
    // Nearest first: the farthest taken off the heap into the last place, and so on.
    const found: number[] = new Array(this.size);
    while (this.size > 0) {
      const last = this.size - 1;
      found[last] = this.slots[this.heapSlot[0]!]!;
      const chord = this.heapChord[last]!;
      const slot = this.heapSlot[last]!;
      this.size = last;
      this.siftDown(chord, slot);
    }
    return found;
  }

  /** Looks at the slots left..right (one node, split on `axis`), the query's side first. */
  private visit(left: number, right: number, axis: number): void {
    if (right - left <= LEAF) {
      for (let i = left; i <= right; i++) this.offer(i);
      return;
    }
    const middle = (left + right) >> 1;
    this.offer(middle);
    const q = axis === 0 ? this.qx : axis === 1 ? this.qy : this.qz;
    const across = q - this.coords[middle * 3 + axis]!;
    const next = (axis + 1) % 3;
    if (across <= 0) {
      this.visit(left, middle - 1, next);
      if (this.size < this.want || across * across < this.heapChord[0]!) this.visit(middle + 1, right, next);
    } else {
      this.visit(middle + 1, right, next);
      if (this.size < this.want || across * across < this.heapChord[0]!) this.visit(left, middle - 1, next);
    }
  }

  /** Takes a slot's point when it is among the nearest found so far. */
  private offer(slot: number): void {
    const c = this.coords;
    const dx = c[slot * 3]! - this.qx;
    const dy = c[slot * 3 + 1]! - this.qy;
    const dz = c[slot * 3 + 2]! - this.qz;
    const chord = dx * dx + dy * dy + dz * dz;
    const heapChord = this.heapChord;
    const heapSlot = this.heapSlot;
    if (this.size < this.want) {
      // Up from the bottom.
      let i = this.size++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (heapChord[parent]! >= chord) break;
        heapChord[i] = heapChord[parent]!;
        heapSlot[i] = heapSlot[parent]!;
        i = parent;
      }
      heapChord[i] = chord;
      heapSlot[i] = slot;
      return;
    }
    if (chord >= heapChord[0]!) return;
    this.siftDown(chord, slot);
  }

  /** Puts (chord, slot) in place of the heap's top, then down to where it belongs. */
  private siftDown(chord: number, slot: number): void {
    const heapChord = this.heapChord;
    const heapSlot = this.heapSlot;
    const size = this.size;
    if (size === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= size) break;
      const r = l + 1;
      const larger = r < size && heapChord[r]! > heapChord[l]! ? r : l;
      if (heapChord[larger]! <= chord) break;
      heapChord[i] = heapChord[larger]!;
      heapSlot[i] = heapSlot[larger]!;
      i = larger;
    }
    heapChord[i] = chord;
    heapSlot[i] = slot;
  }

  /** Orders left..right so that each node's middle slot splits its others on `axis`, recursively. */
  private split(left: number, right: number, axis: number): void {
    if (right - left <= LEAF) return;
    const middle = (left + right) >> 1;
    this.select(left, right, middle, axis);
    const next = (axis + 1) % 3;
    this.split(left, middle - 1, next);
    this.split(middle + 1, right, next);
  }

  /**
   * Quickselect: the slot of rank `k` within left..right on `axis` at k, smaller ones before it, larger
   * after. Partitioned three ways, so that many points at one place (thousands of stations at one
   * placeholder point) take one pass, not one each.
   */
  private select(left: number, right: number, k: number, axis: number): void {
    const c = this.coords;
    while (right > left) {
      // The pivot: the median of the first, middle and last (a sorted run stays linear).
      const mid = (left + right) >> 1;
      const a = c[left * 3 + axis]!;
      const b = c[mid * 3 + axis]!;
      const d = c[right * 3 + axis]!;
      const pivot = a < b ? (b < d ? b : a < d ? d : a) : a < d ? a : b < d ? d : b;
      // left..lt-1 below the pivot, lt..i-1 equal to it, gt+1..right above it.
      let lt = left;
      let gt = right;
      let i = left;
      while (i <= gt) {
        const v = c[i * 3 + axis]!;
        if (v < pivot) this.swap(i++, lt++);
        else if (v > pivot) this.swap(i, gt--);
        else i++;
      }
      if (k < lt) right = lt - 1;
      else if (k > gt) left = gt + 1;
      else return;
    }
  }

  private swap(i: number, j: number): void {
    if (i === j) return;
    const c = this.coords;
    for (let a = 0; a < 3; a++) {
      const t = c[i * 3 + a]!;
      c[i * 3 + a] = c[j * 3 + a]!;
      c[j * 3 + a] = t;
    }
    const s = this.slots[i]!;
    this.slots[i] = this.slots[j]!;
    this.slots[j] = s;
  }
}

/** A point of the Earth (degrees) on the unit sphere. */
function unitVector(lat: number, lon: number): [number, number, number] {
  const phi = lat * RAD;
  const lambda = lon * RAD;
  const cos = Math.cos(phi);
  return [cos * Math.cos(lambda), cos * Math.sin(lambda), Math.sin(phi)];
}
