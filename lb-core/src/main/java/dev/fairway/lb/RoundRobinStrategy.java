package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Strict rotation over the pickable targets. One shared atomic cursor per balancer, starting at a
 * random place (see {@link PaddedCounter#randomStart}).
 */
final class RoundRobinStrategy extends BuiltinStrategy {
  @Override
  public String name() {
    return "round-robin";
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    PaddedCounter cursor = PaddedCounter.randomStart(context.random);
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new RoundRobinSelector(snapshot.pickable, cursor);
      }
    };
  }

  static final class RoundRobinSelector extends Selector {
    private final TrackedTarget[] targets;
    private final PaddedCounter cursor;

    RoundRobinSelector(TrackedTarget[] targets, PaddedCounter cursor) {
      this.targets = targets;
      this.cursor = cursor;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      TrackedTarget[] t = targets;
      int i = cursor.nextIndex(t.length);
      TrackedTarget chosen = t[i];
      if (exclude == null || !exclude.contains(chosen.target)) {
        return chosen;
      }
      return firstAllowed(t, i, exclude);
    }
  }
}
