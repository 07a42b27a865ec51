package dev.fairway.lb;

/**
 * Slow start: a target that joins or comes back starts at 10% of its weight and rises in
 * {@value #STEPS} equal steps to 100% at the end of the window. Pure arithmetic on ticker values;
 * immutable.
 */
final class SlowStart {
  static final int STEPS = 10;
  /** Marks "not warming" in {@code warmingSinceNanos} fields. */
  static final long NOT_WARMING = Long.MIN_VALUE;

  final long windowNanos;

  SlowStart(long windowNanos) {
    this.windowNanos = windowNanos;
  }

  boolean enabled() {
    return windowNanos > 0;
  }

  /** The warming start for a target (re)entering service at {@code now}; {@link #NOT_WARMING} when off. */
  long startAt(long now) {
    return windowNanos > 0 ? now : NOT_WARMING;
  }

  /** True while {@code since} (a {@link #startAt} value) is inside the window at {@code now}. */
  boolean warming(long since, long now) {
    return since != NOT_WARMING && now - since < windowNanos;
  }

  /** The effective weight (in hundredths) of a target of {@code weight} warming since {@code since}. */
  long weight(int weight, long since, long now) {
    if (!warming(since, now)) {
      return 100L * weight;
    }
    long step = Math.min(STEPS, (now - since) * STEPS / windowNanos);
    return Math.max(1, weight * (10L + 90L * step / STEPS));
  }

  /** When the weight of a target warming since {@code since} next changes. */
  long nextStepAt(long since, long now) {
    long step = Math.min(STEPS, (now - since) * STEPS / windowNanos);
    return since + (step + 1) * windowNanos / STEPS;
  }
}
