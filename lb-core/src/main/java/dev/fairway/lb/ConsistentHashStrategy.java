package dev.fairway.lb;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * A hash ring of virtual nodes over all members (healthy or not). Each member gets virtual nodes in
 * proportion to its weight: up to {@value #MAX_NODES_PER_TARGET} per average-weight target, fewer
 * when there are many targets so the ring stays near {@value #RING_BUDGET} points. A point's position
 * depends only on the member's id and the point's number, so removing one of n members moves only
 * the keys that were on it.
 *
 * <p>The ring changes only with membership or weights, and then incrementally: the points of the
 * members that stayed unchanged are kept in order, the departed members' points are filtered out
 * and the newcomers' merged in, so a change of one target in 10,000 costs a pass over the points,
 * not a sort of all of them. The scale (nodes per unit of weight) is kept from the previous ring
 * while the ring stays within half and twice its budget, which also keeps every other key in place.
 *
 * <p>A key is hashed once, cheaply: its {@code String.hashCode()} (cached by the string, and the same
 * in every JVM, so clients of one service agree) spread by Murmur3's finalizer. The lookup is O(1):
 * a bucket table indexed by the hash's top bits gives the first point of its bucket. A member that is
 * ejected, unhealthy or excluded is skipped by walking clockwise to the next eligible member, so a
 * transient ejection costs no rebuild and sends its keys home when it ends. A null key falls back to
 * power of two choices.
 */
final class ConsistentHashStrategy extends BuiltinStrategy {
  static final int MAX_NODES_PER_TARGET = 1000;
  static final int MIN_NODES_PER_TARGET = 8;
  static final int RING_BUDGET = 1 << 16;
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;
  /** Positions keep their top 44 bits: the low 20 carry the owner while sorting. */
  private static final long POSITION_MASK = ~0xFFFFFL;

  @Override
  public String name() {
    return "consistent-hash";
  }

  @Override
  boolean placesKeys() {
    return true;
  }

  @Override
  AttachedStrategy attach(BalancerContext context) {
    // A null key has no place on the ring: power of two choices, attached as a strategy of its own.
    AttachedStrategy keyless = new PowerOfTwoChoicesStrategy().attach(context);
    return new AttachedStrategy() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, @Nullable Selector previous) {
        Ring before = previous instanceof RingSelector old ? old.ring : null;
        Ring ring = before != null && before.membershipVersion == snapshot.membershipVersion
            ? before
            : Ring.build(snapshot.members, snapshot.membershipVersion, before);
        return new RingSelector(ring, keyless.selectorFor(snapshot, null));
      }
    };
  }

  /** The key's position on the ring. */
  static long keyHash(String key) {
    return Murmur3.fmix64(GOLDEN + key.hashCode());
  }

  static final class Ring {
    private static final AtomicLong BUILDS = new AtomicLong();

    final long membershipVersion;
    /** Sorted point positions (signed order). */
    final long[] points;
    /** {@code owners[i]} owns {@code points[i]}. */
    final TrackedTarget[] owners;
    /** Virtual nodes per unit of weight. */
    final double scale;
    /** This build's stamp in {@link TrackedTarget#ringBuild}: which members' points it holds. */
    final long build;
    /** {@code bucketStart[b]}: the first point in bucket b (the top {@code bits} of the position). */
    private final int[] bucketStart;
    private final int bits;

    private Ring(long membershipVersion, long[] points, TrackedTarget[] owners, double scale, long build) {
      this.membershipVersion = membershipVersion;
      this.points = points;
      this.owners = owners;
      this.scale = scale;
      this.build = build;
      this.bits = Math.max(1, Math.min(18, 64 - Long.numberOfLeadingZeros(Math.max(1, points.length - 1))));
      this.bucketStart = new int[(1 << bits) + 1];
      int k = 0;
      for (int b = 0; b < (1 << bits); b++) {
        while (k < points.length && bucket(points[k]) < b) {
          k++;
        }
        bucketStart[b] = k;
      }
      bucketStart[1 << bits] = points.length;
    }

    private int bucket(long position) {
      return (int) ((position ^ Long.MIN_VALUE) >>> (64 - bits)); // signed order as unsigned top bits
    }

    /**
     * The ring for {@code members}, reusing {@code previous}'s points where it can. The bookkeeping
     * (which ring holds a member's points, for which count) lives in fields of the members, written
     * only here, by the balancer's single updater thread; a field read per point is what makes the
     * filter pass cheap.
     */
    static Ring build(TrackedTarget[] members, long membershipVersion, @Nullable Ring previous) {
      int n = members.length;
      double totalWeight = 0;
      for (TrackedTarget m : members) {
        totalWeight += m.target.weight();
      }
      double scale = previous == null ? 0 : previous.scale;
      double expected = scale * totalWeight;
      if (previous == null || expected < RING_BUDGET / 2.0 || expected > RING_BUDGET * 2.0
          || expected / Math.max(1, n) > MAX_NODES_PER_TARGET) {
        double meanWeight = n == 0 ? 1 : totalWeight / n;
        int perTarget = Math.max(MIN_NODES_PER_TARGET, Math.min(MAX_NODES_PER_TARGET, RING_BUDGET / Math.max(1, n)));
        scale = perTarget / meanWeight;
        previous = null; // a new scale moves points: build from scratch
      }
      long build = BUILDS.incrementAndGet();
      int fresh = 0;
      int placedMembers = 0;
      for (TrackedTarget m : members) {
        int count = (int) Math.max(1, Math.round(scale * m.target.weight()));
        boolean keep = previous != null && m.ringBuild == previous.build && m.ringCount == count;
        m.ringBuild = build;
        m.ringPlacedIn = keep ? m.ringPlacedIn : build;
        m.ringCount = count;
        if (!keep) {
          fresh += count;
          placedMembers++;
        }
      }
      // The newcomers' (and re-weighted members') points, sorted; the owner rides in the low 20 bits.
      long[] packed = new long[fresh];
      TrackedTarget[] newOwners = new TrackedTarget[placedMembers];
      int p = 0;
      int o = 0;
      for (TrackedTarget m : members) {
        if (m.ringPlacedIn == build) {
          long base = Murmur3.hash64(m.target.id());
          for (int j = 0; j < m.ringCount; j++) {
            packed[p++] = (Murmur3.fmix64(base + (j + 1) * GOLDEN) & POSITION_MASK) | o;
          }
          newOwners[o++] = m;
        }
      }
      Arrays.sort(packed);
      // Merge them with the previous ring's points of members kept as they were.
      long[] old = previous == null ? new long[0] : previous.points;
      TrackedTarget[] oldOwners = previous == null ? new TrackedTarget[0] : previous.owners;
      int kept = 0;
      for (TrackedTarget owner : oldOwners) {
        if (owner.ringBuild == build && owner.ringPlacedIn != build) {
          kept++;
        }
      }
      long[] points = new long[kept + fresh];
      TrackedTarget[] owners = new TrackedTarget[kept + fresh];
      int i = 0;
      int j = 0;
      int k = 0;
      while (i < old.length || j < fresh) {
        if (i < old.length && !(oldOwners[i].ringBuild == build && oldOwners[i].ringPlacedIn != build)) {
          i++; // departed or re-weighted
          continue;
        }
        if (j >= fresh || (i < old.length && old[i] <= (packed[j] & POSITION_MASK))) {
          points[k] = old[i];
          owners[k++] = oldOwners[i++];
        } else {
          points[k] = packed[j] & POSITION_MASK;
          owners[k++] = newOwners[(int) (packed[j++] & 0xFFFFFL)];
        }
      }
      return new Ring(membershipVersion, points, owners, scale, build);
    }

    /** Index of the first point at or after {@code hash}, wrapping to 0 past the end. */
    int locate(long hash) {
      long h = hash & POSITION_MASK;
      int b = bucket(h);
      int k = bucketStart[b];
      int end = bucketStart[b + 1];
      while (k < end && points[k] < h) {
        k++;
      }
      return k == points.length ? 0 : k;
    }
  }

  static final class RingSelector extends Selector {
    final Ring ring;
    private final Selector keyless;

    RingSelector(Ring ring, Selector keyless) {
      this.ring = ring;
      this.keyless = keyless;
    }

    @Override
    @Nullable TrackedTarget select(@Nullable String key, @Nullable Set<Target> exclude, long nowNanos) {
      if (key == null) {
        return keyless.select(null, exclude, nowNanos);
      }
      TrackedTarget[] owners = ring.owners;
      int len = owners.length;
      int start = ring.locate(keyHash(key));
      TrackedTarget lastRejected = null;
      for (int step = 0; step < len; step++) {
        int k = start + step;
        TrackedTarget t = owners[k >= len ? k - len : k];
        if (t == lastRejected) {
          continue;
        }
        // pickable: in this snapshot's pickable set (the updater sets it before publishing).
        if (t.pickable && !excluded(t, exclude)) {
          return t;
        }
        lastRejected = t;
      }
      // Nothing on the ring may be picked: this snapshot was replaced while in use (its members'
      // flags belong to a newer one). Its own pickable list still decides, as any other strategy's.
      return keyless.select(null, exclude, nowNanos);
    }
  }
}
