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
  /** Coverage per rank: {@code coverage[r]} units of the target at rank r, 0..{@link #units}. */
  final int[] coverage;
  /** Units per whole target: the peer count. */
  final int units;
  /** The rank the arc starts in. */
  final int first;
  /** How many consecutive ranks from {@link #first} (wrapping) the arc touches, at most S. */
  final int ranks;
  /** How many times the peers' arcs cover the ring: each target's coverage summed over all peers, in targets. */
  final int laps;

  private SubsetWindow(int[] coverage, int units, int first, int ranks, int laps) {
    this.coverage = coverage;
    this.units = units;
    this.first = first;
    this.ranks = ranks;
    this.laps = laps;
  }

  /**
   * The arc of the peer at {@code position} over {@code targets} targets (at least 1) for a window of
   * {@code window} targets (1..targets).
   */
  static SubsetWindow of(int targets, int window, PeerPosition position) {
    int peers = position.count();
    long s = targets;
    long c = peers;
    int[] coverage = new int[targets];
    // n = ceil(window C / S), the smallest number of laps whose arcs of whole peer slices hold window targets
    long laps = Math.min(c, (window * c + s - 1) / s);
    if (laps == c) { // the arc is the whole ring
      Arrays.fill(coverage, peers);
      return new SubsetWindow(coverage, peers, 0, targets, peers);
    }
    long start = position.index() * s;
    long end = start + laps * s;
    int first = (int) (start / c);
    int steps = 0;
    for (long at = start, rank = first; at < end; rank++, steps++) {
      long next = Math.min(end, (rank + 1) * c);
      coverage[(int) (rank % s)] += (int) (next - at);
      at = next;
    }
    // An arc longer than S - 1 targets can come back round into the rank it started in: that rank's
    // two pieces add up (to less than a whole target, as the arc is shorter than the ring).
    return new SubsetWindow(coverage, peers, first, Math.min(steps, targets), (int) laps);
  }

  /**
   * The ring order of targets by their ids: {@code order[r]} is the index in {@code ids} of the
   * target at rank r. Sorted by a 64-bit Murmur3 hash of the id (ties by the id itself), so every
   * peer that sees the same ids, in whatever order, builds the same ring, and a target that joins
   * or leaves moves the others by one rank at most.
   */
  static int[] ringOrder(String[] ids) {
    long[] hashes = new long[ids.length];
    Integer[] order = new Integer[ids.length];
    for (int i = 0; i < ids.length; i++) {
      hashes[i] = Murmur3.hash64(ids[i]);
      order[i] = i;
    }
    Arrays.sort(order, Comparator.<Integer>comparingLong(i -> hashes[i]).thenComparing(i -> ids[i]));
    int[] out = new int[ids.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = order[i];
    }
    return out;
  }
}
