package dev.fairway.lb;

import java.util.Arrays;
import java.util.Comparator;

/**
 * The arithmetic of deterministic subsetting ({@link Subset}), pure and exact: the ring order of
 * the targets and one peer's arc of it, in whole units. A ring of {@code S} targets and {@code C}
 * peers is {@code C x S} units long; the target at rank {@code r} owns units {@code [r C, (r + 1) C)},
 * the peer at index {@code i} starts at unit {@code i S} and its arc is {@code n S} units long with
 * {@code n = ceil(window C / S)} (at most {@code C}). So the arcs of all peers cover every unit
 * exactly {@code n} times, and a target's coverage (the units of it inside the arc, 0..C) is its
 * share of the peer's window in {@code 1 / C} of a target, with no rounding anywhere.
 */
final class SubsetWindow {
  /**
   * Coverage of the ranks the arc touches, in order from {@link #first}: {@code coverage[k]} units
   * of the target at rank {@code (first + k) % S}, 1..{@link #units}.
   */
  final int[] coverage;
  /** Units per whole target: the peer count. */
  final int units;
  /** The rank the arc starts in. */
  final int first;
  /** How many consecutive ranks from {@link #first} (wrapping) the arc touches, at most S. */
  final int ranks;
  /** How many times the peers' arcs cover the ring: each target's coverage summed over all peers, in targets. */
  final int laps;
  private final int targets;

  private SubsetWindow(int[] coverage, int units, int first, int ranks, int laps, int targets) {
    this.coverage = coverage;
    this.units = units;
    this.first = first;
    this.ranks = ranks;
    this.laps = laps;
    this.targets = targets;
  }

  /** The rank of the k-th target of the arc. */
  int rank(int k) {
    return (first + k) % targets;
  }

  /** The coverage of every rank, 0 outside the arc (for tests and checks). */
  int[] byRank() {
    int[] out = new int[targets];
    for (int k = 0; k < ranks; k++) {
      out[rank(k)] = coverage[k];
    }
    return out;
  }

  /**
   * The arc of the peer at {@code position} over {@code targets} targets (at least 1) for a window of
   * {@code window} targets (1..targets). Costs O(window + targets / peers), not O(targets).
   */
  static SubsetWindow of(int targets, int window, PeerPosition position) {
    int peers = position.count();
    long s = targets;
    long c = peers;
    // n = ceil(window C / S): the fewest laps whose arcs of whole peer slices hold window targets
    long laps = Math.min(c, (window * c + s - 1) / s);
    if (laps == c) { // the arc is the whole ring
      int[] all = new int[targets];
      Arrays.fill(all, peers);
      return new SubsetWindow(all, peers, 0, targets, peers, targets);
    }
    long start = position.index() * s;
    long end = start + laps * s;
    int first = (int) (start / c);
    // at most ceil(laps S / C) + 1 ranks, and never more than S + 1 steps (see below)
    int[] coverage = new int[(int) Math.min(s + 1, (laps * s + c - 1) / c + 1)];
    int steps = 0;
    for (long at = start, rank = first; at < end; rank++, steps++) {
      long next = Math.min(end, (rank + 1) * c);
      coverage[steps] = (int) (next - at);
      at = next;
    }
    if (steps > targets) {
      // An arc longer than S - 1 targets can come back round into the rank it started in: its two
      // pieces add up (to less than a whole target, as the arc is shorter than the ring).
      coverage[0] += coverage[targets];
      steps = targets;
    }
    return new SubsetWindow(Arrays.copyOf(coverage, steps), peers, first, steps, (int) laps, targets);
  }

  /**
   * The ring order of targets by their ids: {@code order[r]} is the index in {@code ids} of the
   * target at rank r. Sorted by a 64-bit Murmur3 hash of the id (ties by the id itself), so every
   * peer that sees the same ids, in whatever order, builds the same ring, and a target that joins
   * or leaves moves the others by one rank at most.
   */
  static int[] ringOrder(String[] ids) {
    int n = ids.length;
    long[] hashes = new long[n];
    for (int i = 0; i < n; i++) {
      hashes[i] = Murmur3.hash64(ids[i]);
    }
    if (n > INDEX_MASK + 1) {
      return boxedOrder(ids, hashes);
    }
    // Sort primitives: the hash's top 44 bits with the index in the low 20 (signed order); then
    // settle the rare runs whose top bits are equal by the full hash and the id.
    long[] keyed = new long[n];
    for (int i = 0; i < n; i++) {
      keyed[i] = (hashes[i] & ~INDEX_MASK) | i;
    }
    Arrays.sort(keyed);
    int[] out = new int[n];
    for (int r = 0; r < n; r++) {
      out[r] = (int) (keyed[r] & INDEX_MASK);
    }
    for (int r = 0; r < n; ) {
      int end = r + 1;
      while (end < n && (keyed[end] & ~INDEX_MASK) == (keyed[r] & ~INDEX_MASK)) {
        end++;
      }
      if (end - r > 1) {
        Integer[] run = new Integer[end - r];
        for (int k = 0; k < run.length; k++) {
          run[k] = out[r + k];
        }
        Arrays.sort(run, byHashThenId(hashes, ids));
        for (int k = 0; k < run.length; k++) {
          out[r + k] = run[k];
        }
      }
      r = end;
    }
    return out;
  }

  private static final long INDEX_MASK = (1L << 20) - 1;

  private static Comparator<Integer> byHashThenId(long[] hashes, String[] ids) {
    return Comparator.<Integer>comparingLong(i -> hashes[i]).thenComparing(i -> ids[i]);
  }

  private static int[] boxedOrder(String[] ids, long[] hashes) {
    Integer[] order = new Integer[ids.length];
    for (int i = 0; i < ids.length; i++) {
      order[i] = i;
    }
    Arrays.sort(order, byHashThenId(hashes, ids));
    int[] out = new int[ids.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = order[i];
    }
    return out;
  }
}
