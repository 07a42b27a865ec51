package dev.fairway.lb;

import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Zone-aware routing around any strategy, from the outside: the strategy is attached three times,
 * once for the local zone's targets, once for the other zones' targets, and once for all of them
 * (used when there is no {@link ZoneSplit}: panic mode, or every member in one zone). Each keeps its
 * own state (cursor, affinity table), so no strategy knows about zones. This class alone owns zone
 * routing: it computes the split at rebuild time from the snapshot and its own previous selector
 * ({@link ZoneSplit#of}), and its selector tells the balancer when the split must be looked at
 * again and the metrics what share stays local. A pick costs one branch when everything stays
 * local, and one random draw (or one hash of the key, for the strategies that place keys) otherwise.
 *
 * <p>A strategy decides itself whether it is wrapped ({@link BuiltinStrategy#attachTo}):
 * {@link Strategy#concurrencyLimited} is not, since it already ranks targets by closeness under its
 * soft limit and so spills exactly when the local zone runs out of slots.
 */
final class ZoneRouting extends AttachedStrategy {
  private final AttachedStrategy all;
  private final AttachedStrategy local;
  private final AttachedStrategy remote;
  private final RandomSource random;
  /** True for the strategies that place keys: a key's zone then follows from its hash, not a draw. */
  private final boolean keyed;

  private final String localZone;

  ZoneRouting(BuiltinStrategy strategy, BalancerContext context) {
    this.all = strategy.attach(context);
    this.local = strategy.attach(context);
    this.remote = strategy.attach(context);
    this.random = context.random;
    this.keyed = strategy.placesKeys();
    this.localZone = context.localZone;
  }

  @Override
  Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
    ZoneSelector before = previous instanceof ZoneSelector z ? z : null;
    ZoneSplit split = ZoneSplit.of(localZone, snapshot, before == null ? null : before.split);
    if (split == null) {
      return all.selectorFor(snapshot, before != null ? null : previous);
    }
    Selector l = side(split.local, local, before == null ? null : before.local);
    Selector r = side(split.remote, remote, before == null ? null : before.remote);
    return new ZoneSelector(split, l, r, random, keyed);
  }

  private static @Nullable Selector side(TargetSnapshot side, AttachedStrategy instance, @Nullable Selector previous) {
    return side.pickable.length == 0 ? null : instance.selectorFor(side, previous);
  }

  @Override
  boolean splitsByZone() {
    return true;
  }

  @Override
  int waiting() {
    return all.waiting();
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
  boolean keepsAffinity() {
    return all.keepsAffinity();
  }

  @Override
  void close() {
    all.close();
    local.close();
    remote.close();
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
    /** {@link ZoneSplit#localShare}, or 0 or 1 when one side has nothing pickable. */
    private final double stayShare;
    private final RandomSource random;
    private final boolean keyed;

    ZoneSelector(ZoneSplit split, @Nullable Selector local, @Nullable Selector remote, RandomSource random,
        boolean keyed) {
      this.split = split;
      this.local = local;
      this.remote = remote;
      // No local target pickable: everything spills, whatever the rule says.
      this.stayShare = local == null ? 0.0 : remote == null ? 1.0 : split.localShare;
      this.random = random;
      this.keyed = keyed;
    }

    /** When the local share must rise again (the split's next step back after a recovery). */
    @Override
    long reviewAtNanos() {
      return split.nextRiseAtNanos();
    }

    @Override
    double localShare() {
      return split.localShare;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      boolean stay = stayShare >= 1.0
          || (stayShare > 0.0 && (keyed && key != null ? keyFraction(key) : random.nextDouble()) < stayShare);
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
