package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Sticky keys: a new key is placed by jump consistent hash over the pickable targets and remembered
 * in the {@link AffinityTable}; later picks for the key return the remembered target (its home)
 * while it is pickable, not excluded, and has not failed since (its affinity epoch is unchanged).
 * When the home failed or left, the key is placed again, avoiding the target it was on, and the
 * table remembers the new home. When the home is merely excluded from one pick (a hedge, whose
 * copy must go elsewhere, or a target on trial with every permit in use), that pick is placed
 * elsewhere the same way but the table is not written: the key stays with its home, so a hedge
 * that wins does not move it. Placement ignores weights. A null key falls back to power of two
 * choices.
 */
final class KeyAffinityStrategy extends BuiltinStrategy {
  static final int DEFAULT_MAX_KEYS = 100_000;
  private final int maxKeys;

  KeyAffinityStrategy(int maxKeys) {
    if (maxKeys < 1) {
      throw new IllegalArgumentException("maxKeys: " + maxKeys + " (expected: >= 1)");
    }
    this.maxKeys = maxKeys;
  }

  @Override
  public String name() {
    return "key-affinity";
  }

  @Override
  boolean placesKeys() {
    return true;
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    AffinityTable table = new AffinityTable(maxKeys);
    // A null key has no home: power of two choices, attached to this balancer as a strategy of its own.
    AttachedStrategy keyless = new PowerOfTwoChoicesStrategy().attach(context);
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        return new KeyAffinitySelector(snapshot, table, keyless.selectorFor(snapshot, null));
      }

      @Override
      boolean keepsAffinity() {
        return true;
      }
    };
  }

  static final class KeyAffinitySelector extends Selector {
    private final TrackedTarget[] targets;
    private final AffinityTable table;
    private final Selector keyless;

    KeyAffinitySelector(TargetSnapshot snapshot, AffinityTable table, Selector keyless) {
      this.targets = snapshot.pickable;
      this.table = table;
      this.keyless = keyless;
    }

    AffinityTable table() {
      return table;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      if (key == null) {
        return keyless.select(null, exclude, nowNanos);
      }
      AffinityTable.Entry entry = table.get(key);
      TrackedTarget avoid = null;
      if (entry != null) {
        TrackedTarget remembered = entry.target;
        if (entry.valid()) {
          if (!excluded(remembered, exclude)) {
            return remembered;
          }
          // The home is fine, only this pick may not use it: served elsewhere, the key stays home.
          return place(key, remembered, exclude);
        }
        avoid = remembered;
      }
      TrackedTarget placed = place(key, avoid, exclude);
      if (placed != null) {
        table.put(key, placed);
      }
      return placed;
    }

    private @Nullable TrackedTarget place(String key, @Nullable TrackedTarget avoid, @Nullable Set<Target> exclude) {
      int n = targets.length;
      long h = Murmur3.hash64(key);
      int idx = Murmur3.jump(h, n);
      for (int attempt = 0; attempt < 4; attempt++) {
        TrackedTarget t = targets[idx];
        if (t != avoid && !excluded(t, exclude)) {
          return t;
        }
        h = Murmur3.fmix64(h + 0x9E3779B97F4A7C15L);
        idx = Murmur3.jump(h, n);
      }
      boolean avoidIsHere = false;
      for (int k = 0; k < n; k++) {
        int i = idx + k;
        TrackedTarget t = targets[i >= n ? i - n : i];
        if (t == avoid) {
          avoidIsHere = true;
        } else if (!excluded(t, exclude)) {
          return t;
        }
      }
      // Only the target to avoid is left: better it than nothing. If it is one of this snapshot's
      // targets it may be chosen as any of them may, even if a newer snapshot (published while this
      // one is in use) has already cleared its pickable flag; with one target per zone side that
      // race is common, and refusing would fail a call that had a target.
      return avoid != null && (avoidIsHere || avoid.pickable) && !excluded(avoid, exclude) ? avoid : null;
    }
  }
}
