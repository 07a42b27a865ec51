package dev.fairway.lb;

import org.jspecify.annotations.Nullable;

/**
 * Everything a pick needs, frozen: the members, which of them may be picked, their effective
 * weights, and the strategy's selector built for exactly this set. Built by the
 * {@link SnapshotBuilder}, published through one volatile write, never mutated after.
 */
final class TargetSnapshot {
  /** Changes whenever the set of members or their weights change (not on health changes). */
  final long membershipVersion;
  /** Every known target, in the source's order. */
  final TrackedTarget[] members;
  /** {@code memberPickable[i]} tells whether {@code members[i]} may be picked. */
  final boolean[] memberPickable;
  /** The targets picks may go to: the ones in service, or every member in panic mode. */
  final TrackedTarget[] pickable;
  /** Effective weight of each pickable target: weight x 100, reduced while warming (slow start). */
  final long[] weights;
  final boolean uniformWeights;
  /** True when too few targets are in service and picks go to every member. */
  final boolean panic;
  /** Pickable targets that are half-open: a pick of one of them must take a trial permit. */
  final int trialTargets;
  /** Ticker time at which health or warming must be looked at again; Long.MAX_VALUE for never. */
  final long reviewAtNanos;
  /** Why nothing is pickable, for the exception message; empty when something is. */
  final String unavailableReason;
  /**
   * How picks divide between the local zone and the others; null without a local zone, in panic
   * mode, or when every member is in one zone (then picks run over {@link #pickable} as they are).
   */
  final @Nullable ZoneSplit zoneSplit;
  /** Null exactly when nothing is pickable. */
  final @Nullable Selector selector;

  TargetSnapshot(
      long membershipVersion,
      TrackedTarget[] members,
      boolean[] memberPickable,
      TrackedTarget[] pickable,
      long[] weights,
      boolean panic,
      int trialTargets,
      long reviewAtNanos,
      String unavailableReason,
      @Nullable ZoneSplit zoneSplit,
      StrategyInstance strategy,
      @Nullable Selector previous) {
    this.membershipVersion = membershipVersion;
    this.members = members;
    this.memberPickable = memberPickable;
    this.pickable = pickable;
    this.weights = weights;
    this.uniformWeights = allEqual(weights);
    this.panic = panic;
    this.trialTargets = trialTargets;
    this.reviewAtNanos = reviewAtNanos;
    this.unavailableReason = unavailableReason;
    this.zoneSplit = zoneSplit;
    // Last: the selector reads the fields above.
    this.selector = pickable.length == 0 ? null : strategy.selectorFor(this, previous);
  }

  private static boolean allEqual(long[] w) {
    for (int i = 1; i < w.length; i++) {
      if (w[i] != w[0]) {
        return false;
      }
    }
    return true;
  }
}
