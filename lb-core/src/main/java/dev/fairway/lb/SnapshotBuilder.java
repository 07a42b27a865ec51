package dev.fairway.lb;

import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * Builds the {@link TargetSnapshot} for a membership at a moment: which members are pickable (in
 * service, or all of them in panic mode), their effective weights (slow start), which are on
 * trial, and the next time the snapshot must be looked at again. A pure function of its inputs: it
 * reads health phases as of {@code now} and changes no state, so it is tested without a balancer.
 * It knows nothing of strategies or zones: the strategy turns the snapshot into a selector.
 *
 * <p>With a {@link Subset} and a known position, the snapshot's members are this client's window
 * ({@link SubsetWindow}), widened past its end for targets out of service, and its weights carry
 * the window's fractional edges; the full list stays in {@link TargetSnapshot#known}. The only
 * state it keeps is a cache of the last ring order and window (the updater's applier is its one
 * caller), so equal inputs still give equal snapshots.
 */
final class SnapshotBuilder {
  /** Subset snapshots number their versions from here, apart from {@link Membership#version}. */
  static final long SUBSET_VERSIONS = 1L << 62;

  private final int panicThresholdPercent;
  private final SlowStart slowStart;
  private final @Nullable Subset subset;
  /** The ring order of the last membership and the last window built over it; replaced whole. */
  private volatile @Nullable RingCache cache;

  SnapshotBuilder(int panicThresholdPercent, SlowStart slowStart) {
    this(panicThresholdPercent, slowStart, null);
  }

  SnapshotBuilder(int panicThresholdPercent, SlowStart slowStart, @Nullable Subset subset) {
    this.panicThresholdPercent = panicThresholdPercent;
    this.slowStart = slowStart;
    this.subset = subset;
  }

  /** True when built with a {@link Subset}. */
  boolean subsets() {
    return subset != null;
  }

  /** The ring order of one membership, and the last window over it with the version it was given. */
  private static final class RingCache {
    final Membership membership;
    final int[] order;
    final TrackedTarget[] window;
    final long version;

    RingCache(Membership membership, int[] order, TrackedTarget[] window, long version) {
      this.membership = membership;
      this.order = order;
      this.window = window;
      this.version = version;
    }
  }

  /** The snapshot a closed balancer serves: nothing pickable, and the reason says so. */
  static TargetSnapshot closed() {
    TrackedTarget[] none = new TrackedTarget[0];
    return new TargetSnapshot(-1, none, new boolean[0], none, new long[0], new boolean[0], false, Long.MAX_VALUE,
        0, "the balancer is closed");
  }

  TargetSnapshot build(Membership membership, long now) {
    return build(membership, now, null);
  }

  /**
   * The snapshot of {@code membership} at {@code now}; over this client's subset window when the
   * builder has a {@link Subset} and {@code position} is known, else over every member.
   */
  TargetSnapshot build(Membership membership, long now, @Nullable PeerPosition position) {
    TrackedTarget[] m = membership.members;
    HealthPhase[] phases = new HealthPhase[m.length];
    long reviewAt = Long.MAX_VALUE;
    int inService = 0;
    for (int i = 0; i < m.length; i++) {
      TargetHealth.State s = m[i].health.state();
      HealthPhase p = m[i].health.phaseAt(now);
      phases[i] = p;
      if (p == HealthPhase.EJECTED) {
        reviewAt = Math.min(reviewAt, s.ejectedUntilNanos);
      } else if (p != s.phase) {
        reviewAt = now; // a time-derived change is due: the updater applies it at the next look
      }
      if (p.inService()) {
        inService++;
      }
    }
    boolean panic = m.length > 0 && inService * 100L < (long) panicThresholdPercent * m.length;
    Subset sub = subset;
    if (sub != null && position != null && m.length > 0) {
      return buildSubset(membership, phases, inService, panic, reviewAt, now, sub.windowSize(m.length), position);
    }
    int count = panic ? m.length : inService;
    TrackedTarget[] pickable = new TrackedTarget[count];
    boolean[] memberPickable = new boolean[m.length];
    long[] weights = new long[count];
    boolean[] trial = new boolean[count];
    int k = 0;
    for (int i = 0; i < m.length; i++) {
      if (!panic && !phases[i].inService()) {
        continue;
      }
      TrackedTarget t = m[i];
      memberPickable[i] = true;
      long since = t.health.state().warmingSinceNanos;
      weights[k] = slowStart.weight(t.target.weight(), since, now);
      if (slowStart.warming(since, now)) {
        reviewAt = Math.min(reviewAt, slowStart.nextStepAt(since, now));
      }
      if (phases[i] == HealthPhase.HALF_OPEN) {
        trial[k] = true;
      }
      pickable[k++] = t;
    }
    String reason = "";
    if (count == 0) {
      reason = m.length == 0
          ? (membership.sawTargets ? "no targets known (the target source's list is empty)"
              : "no targets known yet (the target source has not delivered a list)")
          : "all " + m.length + " targets are unhealthy or ejected";
    }
    return new TargetSnapshot(membership.version, m, memberPickable, pickable, weights, trial, panic, reviewAt, now,
        reason);
  }

  private TargetSnapshot buildSubset(Membership membership, HealthPhase[] phases, int inService, boolean panic,
      long reviewAtBefore, long now, int windowSize, PeerPosition position) {
    TrackedTarget[] m = membership.members;
    int n = m.length;
    RingCache before = cache;
    int[] order = before != null && before.membership == membership ? before.order : ringOrder(m);
    SubsetWindow w = SubsetWindow.of(n, windowSize, position);
    int[] coverage = Arrays.copyOf(w.coverage, n); // by position in the window; widened in place below
    int ranks = w.ranks;
    int healthy = 0;
    for (int k = 0; k < ranks; k++) {
      if (phases[order[w.rank(k)]].inService()) {
        healthy++;
      }
    }
    if (!panic) {
      // Make up for each target out of service in the window with the next one past its end, until
      // the window has as many in service as it covers (or every target in service is in it).
      int wanted = Math.min(ranks, inService);
      while (healthy < wanted && ranks < n) {
        coverage[ranks] = w.units;
        if (phases[order[w.rank(ranks)]].inService()) {
          healthy++;
        }
        ranks++;
      }
    }
    int count = panic ? ranks : healthy;
    TrackedTarget[] window = new TrackedTarget[ranks];
    boolean[] windowPickable = new boolean[ranks];
    TrackedTarget[] pickable = new TrackedTarget[count];
    long[] weights = new long[count];
    boolean[] trial = new boolean[count];
    boolean[] knownPickable = new boolean[n];
    double[] knownShare = new double[n];
    long reviewAt = reviewAtBefore;
    int p = 0;
    for (int k = 0; k < ranks; k++) {
      int i = order[w.rank(k)];
      TrackedTarget t = m[i];
      window[k] = t;
      knownShare[i] = coverage[k] / (double) w.units;
      if (!panic && !phases[i].inService()) {
        continue;
      }
      windowPickable[k] = true;
      knownPickable[i] = true;
      long since = t.health.state().warmingSinceNanos;
      // the window's fraction of the target, in 1/units: exact, and the strategy sees it as weight
      weights[p] = slowStart.weight(t.target.weight(), since, now) * coverage[k];
      if (slowStart.warming(since, now)) {
        reviewAt = Math.min(reviewAt, slowStart.nextStepAt(since, now));
      }
      trial[p] = phases[i] == HealthPhase.HALF_OPEN;
      pickable[p++] = t;
    }
    long version = before != null && before.membership == membership && sameTargets(before.window, window)
        ? before.version
        : (before != null ? before.version + 1 : SUBSET_VERSIONS);
    cache = new RingCache(membership, order, window, version);
    String reason = count == 0 ? "all " + n + " targets are unhealthy or ejected" : "";
    return new TargetSnapshot(version, window, windowPickable, pickable, weights, trial, panic, reviewAt, now, reason,
        m, knownPickable, knownShare);
  }

  private static int[] ringOrder(TrackedTarget[] members) {
    String[] ids = new String[members.length];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = members[i].target.id();
    }
    return SubsetWindow.ringOrder(ids);
  }

  private static boolean sameTargets(TrackedTarget[] a, TrackedTarget[] b) {
    if (a.length != b.length) {
      return false;
    }
    for (int i = 0; i < a.length; i++) {
      if (a[i] != b[i]) {
        return false;
      }
    }
    return true;
  }
}
