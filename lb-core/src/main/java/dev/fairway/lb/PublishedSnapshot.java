package dev.fairway.lb;

import org.jspecify.annotations.Nullable;

/**
 * What one pick reads, in one object: the {@link TargetSnapshot} and the selector the strategy built
 * for it, published together by the {@link BalancerUpdater} with one volatile write, never mutated
 * after. The few fields the pick path reads on every call are copied here, so a pick follows no
 * pointer to the snapshot (gRPC's {@code SubchannelPicker} is the same step: state in, picker out).
 */
final class PublishedSnapshot {
  final TargetSnapshot snapshot;
  /** Null exactly when nothing is pickable. */
  final @Nullable Selector selector;
  /** The earlier of the snapshot's review time and the selector's ({@link Selector#reviewAtNanos}). */
  final long reviewAtNanos;
  /** {@link TargetSnapshot#panic}. */
  final boolean panic;
  /** {@link TargetSnapshot#trialTargets}. */
  final int trialTargets;
  /** {@link HealthEpoch#mark} as read before the snapshot read any target's health. */
  final long healthMark;

  PublishedSnapshot(TargetSnapshot snapshot, @Nullable Selector selector, long healthMark) {
    this.snapshot = snapshot;
    this.healthMark = healthMark;
    this.selector = selector;
    this.reviewAtNanos = selector == null ? snapshot.reviewAtNanos
        : Math.min(snapshot.reviewAtNanos, selector.reviewAtNanos());
    this.panic = snapshot.panic;
    this.trialTargets = snapshot.trialTargets;
  }

  /**
   * {@code snapshot} with the selector {@code strategy} builds for it from {@code previous} (the
   * selector being replaced, or null), or with none when nothing is pickable.
   */
  static PublishedSnapshot of(TargetSnapshot snapshot, AttachedStrategy strategy, @Nullable Selector previous,
      long healthMark) {
    return new PublishedSnapshot(snapshot,
        snapshot.pickable.length == 0 ? null : strategy.selectorFor(snapshot, previous), healthMark);
  }
}
