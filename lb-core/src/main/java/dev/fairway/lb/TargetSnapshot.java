package dev.fairway.lb;

import org.jspecify.annotations.Nullable;

/**
 * The members of one balancer at one moment, frozen, as plain data: which of them may be picked,
 * their effective weights, which are on trial. Built by the {@link SnapshotBuilder}; only the
 * strategy turns it into a {@link Selector} ({@link AttachedStrategy#selectorFor}), and the
 * {@link BalancerUpdater} publishes the two together in a {@link PublishedSnapshot}. Never mutated
 * after it is built; it knows nothing of strategies.
 */
final class TargetSnapshot {
  /** Changes whenever the set of members or their weights change (not on health changes). */
  final long membershipVersion;
  /**
   * The members the strategy works over: every known target, in the source's order; with a subset
   * ({@link Subset}), the targets of this client's window, in ring order.
   */
  final TrackedTarget[] members;
  /** {@code memberPickable[i]} tells whether {@code members[i]} may be picked. */
  final boolean[] memberPickable;
  /** The targets picks may go to: the ones in service, or every member in panic mode. */
  final TrackedTarget[] pickable;
  /** Effective weight of each pickable target: weight x 100, reduced while warming (slow start). */
  final long[] weights;
  final boolean uniformWeights;
  /** {@code onTrial[i]} tells whether {@code pickable[i]} is half-open (a pick of it takes a trial permit). */
  final boolean[] onTrial;
  /** How many pickable targets are on trial. */
  final int trialTargets;
  /** True when too few targets are in service and picks go to every member. */
  final boolean panic;
  /** Ticker time at which health or warming must be looked at again; Long.MAX_VALUE for never. */
  final long reviewAtNanos;
  /** The ticker time the snapshot describes. */
  final long builtAtNanos;
  /** Why nothing is pickable, for the exception message; empty when something is. */
  final String unavailableReason;
  /** Every known target, in the source's order ({@link #members} itself without a subset). */
  final TrackedTarget[] known;
  /** {@code knownPickable[i]} tells whether {@code known[i]} may be picked. */
  final boolean[] knownPickable;
  /**
   * How much of {@code known[i]} this client's subset window covers, 0..1; null without a subset
   * (then 1 for every target).
   */
  final double @Nullable [] knownShare;

  TargetSnapshot(
      long membershipVersion,
      TrackedTarget[] members,
      boolean[] memberPickable,
      TrackedTarget[] pickable,
      long[] weights,
      boolean[] onTrial,
      boolean panic,
      long reviewAtNanos,
      long builtAtNanos,
      String unavailableReason) {
    this(membershipVersion, members, memberPickable, pickable, weights, onTrial, panic, reviewAtNanos, builtAtNanos,
        unavailableReason, members, memberPickable, null);
  }

  /** A snapshot whose strategy works over {@code members}, a part of the {@code known} targets. */
  TargetSnapshot(
      long membershipVersion,
      TrackedTarget[] members,
      boolean[] memberPickable,
      TrackedTarget[] pickable,
      long[] weights,
      boolean[] onTrial,
      boolean panic,
      long reviewAtNanos,
      long builtAtNanos,
      String unavailableReason,
      TrackedTarget[] known,
      boolean[] knownPickable,
      double @Nullable [] knownShare) {
    this.known = known;
    this.knownPickable = knownPickable;
    this.knownShare = knownShare;
    this.membershipVersion = membershipVersion;
    this.members = members;
    this.memberPickable = memberPickable;
    this.pickable = pickable;
    this.weights = weights;
    this.uniformWeights = allEqual(weights);
    this.onTrial = onTrial;
    this.trialTargets = count(onTrial);
    this.panic = panic;
    this.reviewAtNanos = reviewAtNanos;
    this.builtAtNanos = builtAtNanos;
    this.unavailableReason = unavailableReason;
  }

  private static boolean allEqual(long[] w) {
    for (int i = 1; i < w.length; i++) {
      if (w[i] != w[0]) {
        return false;
      }
    }
    return true;
  }

  private static int count(boolean[] flags) {
    int n = 0;
    for (boolean f : flags) {
      if (f) {
        n++;
      }
    }
    return n;
  }
}
