package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A strategy's chooser for one {@link TargetSnapshot}: immutable apart from the strategy's own
 * counters, built at rebuild time, called on every pick. Implementations must not lock, must not
 * allocate, and must finish in a bounded number of steps.
 */
abstract class Selector {
  /**
   * Chooses a target not in {@code exclude} ({@code null} = nothing excluded), or returns
   * {@code null} when it has none to give: every candidate is excluded, or (only a strategy with a
   * capacity limit) every one is full, and then {@link AttachedStrategy#awaitSlot} waits. Unless
   * {@link #acquiresSlot()}, the caller increments the chosen target's in-flight count.
   */
  abstract @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos);

  /**
   * Ticker time at which this selector must be rebuilt though nothing else changed; Long.MAX_VALUE
   * for never. Only the zone-aware selector has one (the steps of a recovering local share).
   */
  long reviewAtNanos() {
    return Long.MAX_VALUE;
  }

  /** The share of calls this selector keeps in the balancer's local zone: 1 unless it splits by zone. */
  double localShare() {
    return 1.0;
  }

  /** True if {@link #select} already incremented the chosen target's in-flight count. */
  boolean acquiresSlot() {
    return false;
  }

  /** The target's round-trip time for ranking by closeness: unknown ranks after every known one. */
  static long roundTripRank(TrackedTarget t) {
    long rtt = t.target.roundTripNanos();
    return rtt < 0 ? Long.MAX_VALUE : rtt;
  }

  /**
   * Each target's {@link #roundTripRank}, for breaking ties by closeness, or null when no target's
   * round-trip time is known: then there is nothing to break ties by, and the pick path skips it.
   */
  static long @Nullable [] roundTripRanks(TrackedTarget[] targets) {
    long[] ranks = new long[targets.length];
    boolean known = false;
    for (int i = 0; i < targets.length; i++) {
      ranks[i] = roundTripRank(targets[i]);
      known |= ranks[i] != Long.MAX_VALUE;
    }
    return known ? ranks : null;
  }

  static boolean excluded(TrackedTarget t, @Nullable Set<Target> exclude) {
    return exclude != null && exclude.contains(t.target);
  }

  /** The first target at or after {@code start} (cyclically) that is not excluded; null if none. */
  static @Nullable TrackedTarget firstAllowed(TrackedTarget[] targets, int start, @Nullable Set<Target> exclude) {
    int n = targets.length;
    for (int i = 0; i < n; i++) {
      int idx = start + i;
      if (idx >= n) {
        idx -= n;
      }
      TrackedTarget t = targets[idx];
      if (!excluded(t, exclude)) {
        return t;
      }
    }
    return null;
  }
}
