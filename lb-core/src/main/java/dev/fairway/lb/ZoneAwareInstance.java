package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Zone-aware routing around any strategy, from the outside: the strategy is attached three times,
 * once for the local zone's targets, once for the other zones' targets, and once for all of them
 * (used when the snapshot has no {@link ZoneSplit}: panic mode, or every member in one zone). Each
 * keeps its own state (cursor, affinity table), so no strategy knows about zones. The split itself
 * is computed at rebuild time ({@link ZoneSplit#of}); a pick costs one branch when everything stays
 * local, and one random draw (or one hash of the key, for the affinity strategies) otherwise.
 *
 * <p>Not used for {@link Strategy#concurrencyLimited}, which already ranks targets by closeness
 * under its soft limit and so spills exactly when the local zone runs out of slots.
 */
final class ZoneAwareInstance extends StrategyInstance {
  private final StrategyInstance all;
  private final StrategyInstance local;
  private final StrategyInstance remote;
  private final RandomSource random;
  /** True for the strategies that place keys: a key's zone then follows from its hash, not a draw. */
  private final boolean keyed;

  ZoneAwareInstance(BuiltinStrategy strategy, BalancerContext context) {
    this.all = strategy.attach(context);
    this.local = strategy.attach(context);
    this.remote = strategy.attach(context);
    this.random = context.random;
    this.keyed = strategy instanceof KeyAffinityStrategy || strategy instanceof ConsistentHashStrategy;
  }

  @Override
  Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
    ZoneSplit split = snapshot.zoneSplit;
    if (split == null) {
      return all.selectorFor(snapshot, previous instanceof ZoneSelector ? null : previous);
    }
    ZoneSelector before = previous instanceof ZoneSelector z ? z : null;
    Selector l = side(snapshot, split.local, local, before == null ? null : before.local);
    Selector r = side(snapshot, split.remote, remote, before == null ? null : before.remote);
    return new ZoneSelector(split, l, r, random, keyed);
  }

  private static @Nullable Selector side(TargetSnapshot whole, ZoneSplit.Side side, StrategyInstance instance,
      @Nullable Selector previous) {
    return new TargetSnapshot(whole.membershipVersion, side.members, side.memberPickable, side.pickable, side.weights,
        false, side.trialTargets, whole.reviewAtNanos, "", null, instance, previous).selector;
  }

  @Override
  void onRelease(TrackedTarget target) {
    all.onRelease(target);
    local.onRelease(target);
    remote.onRelease(target);
  }

  @Override
  void onPublish() {
    all.onPublish();
    local.onPublish();
    remote.onPublish();
  }

  @Override
  @Nullable AffinityTable affinityTable() {
    return all.affinityTable(); // only tells whether the strategy keeps one (for the metric)
  }

  @Override
  void close() {
    all.close();
    local.close();
    remote.close();
  }

  /** The share of calls that stays local in {@code snapshot}; 1 when it makes no split. */
  static double localShare(TargetSnapshot snapshot) {
    ZoneSplit split = snapshot.zoneSplit;
    return split == null ? 1.0 : split.localShare;
  }

  /** The key's place in [0, 1), independent of where any strategy hashes it to. */
  static double keyFraction(String key) {
    // A salt unlike the strategies' own mixing, so that the keys kept local are not the keys of one
    // arc of the ring (which would load one local target).
    long h = Murmur3.fmix64(key.hashCode() * 0xC2B2AE3D27D4EB4FL + 0x165667B19E3779F9L);
    return (h >>> 11) * 0x1.0p-53;
  }

  static final class ZoneSelector extends Selector {
    final ZoneSplit split;
    final @Nullable Selector local;
    final @Nullable Selector remote;
    private final double localShare;
    private final RandomSource random;
    private final boolean keyed;

    ZoneSelector(ZoneSplit split, @Nullable Selector local, @Nullable Selector remote, RandomSource random,
        boolean keyed) {
      this.split = split;
      this.local = local;
      this.remote = remote;
      // No local target pickable: everything spills, whatever the rule says.
      this.localShare = local == null ? 0.0 : remote == null ? 1.0 : split.localShare;
      this.random = random;
      this.keyed = keyed;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      boolean stay = localShare >= 1.0
          || (localShare > 0.0 && (keyed && key != null ? keyFraction(key) : random.nextDouble()) < localShare);
      Selector first = stay ? local : remote;
      Selector second = stay ? remote : local;
      TrackedTarget t = first == null ? null : first.select(key, exclude, nowNanos);
      if (t == null && second != null) {
        t = second.select(key, exclude, nowNanos); // everything on this side is excluded: cross over
      }
      return t;
    }
  }
}
