package dev.fairway.lb;

import java.util.Arrays;
import java.util.Set;

/**
 * A hash ring of virtual nodes over all members (healthy or not), looked up by binary search over a
 * sorted {@code long[]}. Each member gets virtual nodes in proportion to its weight: up to
 * {@value #MAX_NODES_PER_TARGET} per average-weight target, fewer when there are many targets so the
 * ring stays near {@value #RING_BUDGET} points. A point's position depends only on the member's id
 * and the point's number, so removing one of n members moves only the keys that were on it.
 *
 * <p>The ring changes only with membership or weights. A member that is ejected, unhealthy or
 * excluded is skipped by walking clockwise to the next eligible member, so a transient ejection
 * costs no rebuild and sends its keys home when it ends. A null key falls back to power of two
 * choices.
 */
final class ConsistentHashStrategy extends BuiltinStrategy {
  static final int MAX_NODES_PER_TARGET = 1000;
  static final int MIN_NODES_PER_TARGET = 8;
  static final int RING_BUDGET = 1 << 16;
  private static final long GOLDEN = 0x9E3779B97F4A7C15L;

  @Override
  public String name() {
    return "consistent-hash";
  }

  @Override
  StrategyInstance attach(BalancerContext context) {
    return new StrategyInstance() {
      @Override
      Selector selectorFor(TargetSnapshot snapshot, Selector previous) {
        Ring ring =
            previous instanceof RingSelector && ((RingSelector) previous).ring.membershipVersion == snapshot.membershipVersion
                ? ((RingSelector) previous).ring
                : Ring.build(snapshot.members, snapshot.membershipVersion);
        return new RingSelector(ring, snapshot, new PowerOfTwoChoicesStrategy.P2cSelector(snapshot, context.random));
      }
    };
  }

  static final class Ring {
    final long membershipVersion;
    /** Sorted point positions. */
    final long[] points;
    /** {@code owners[i]} is the member index owning {@code points[i]}. */
    final int[] owners;

    private Ring(long membershipVersion, long[] points, int[] owners) {
      this.membershipVersion = membershipVersion;
      this.points = points;
      this.owners = owners;
    }

    static Ring build(TrackedTarget[] members, long membershipVersion) {
      int n = members.length;
      double totalWeight = 0;
      for (TrackedTarget m : members) {
        totalWeight += m.target.weight();
      }
      double meanWeight = n == 0 ? 1 : totalWeight / n;
      int perTarget = Math.max(MIN_NODES_PER_TARGET, Math.min(MAX_NODES_PER_TARGET, RING_BUDGET / Math.max(1, n)));
      int[] counts = new int[n];
      int total = 0;
      for (int i = 0; i < n; i++) {
        counts[i] = (int) Math.max(1, Math.round(perTarget * members[i].target.weight() / meanWeight));
        total += counts[i];
      }
      // Sort (position, owner) pairs as one long[]: position in the high 44 bits, owner in the low 20.
      // Dropping 20 low bits of a 64-bit hash leaves collisions vanishingly rare; ties sort by owner.
      long[] packed = new long[total];
      int p = 0;
      for (int i = 0; i < n; i++) {
        long base = Murmur3.hash64(members[i].target.id());
        for (int j = 0; j < counts[i]; j++) {
          long position = Murmur3.fmix64(base + (j + 1) * GOLDEN);
          packed[p++] = (position & ~0xFFFFFL) | i;
        }
      }
      Arrays.sort(packed);
      long[] points = new long[total];
      int[] owners = new int[total];
      for (int k = 0; k < total; k++) {
        points[k] = packed[k] & ~0xFFFFFL;
        owners[k] = (int) (packed[k] & 0xFFFFFL);
      }
      return new Ring(membershipVersion, points, owners);
    }

    /** Index of the first point at or after {@code hash}, wrapping to 0 past the end. */
    int locate(long hash) {
      long h = hash & ~0xFFFFFL;
      int lo = 0;
      int hi = points.length;
      while (lo < hi) {
        int mid = (lo + hi) >>> 1;
        if (points[mid] < h) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      return lo == points.length ? 0 : lo;
    }
  }

  static final class RingSelector extends Selector {
    final Ring ring;
    private final TrackedTarget[] members;
    private final boolean[] memberPickable;
    private final Selector keyless;

    RingSelector(Ring ring, TargetSnapshot snapshot, Selector keyless) {
      this.ring = ring;
      this.members = snapshot.members;
      this.memberPickable = snapshot.memberPickable;
      this.keyless = keyless;
    }

    @Override
    TrackedTarget select(String key, Set<Target> exclude, long nowNanos) {
      if (key == null) {
        return keyless.select(null, exclude, nowNanos);
      }
      int[] owners = ring.owners;
      int len = owners.length;
      int start = ring.locate(Murmur3.hash64(key));
      int lastRejected = -1;
      for (int step = 0; step < len; step++) {
        int k = start + step;
        int m = owners[k >= len ? k - len : k];
        if (m == lastRejected) {
          continue;
        }
        TrackedTarget t = members[m];
        if (memberPickable[m] && !excluded(t, exclude)) {
          return t;
        }
        lastRejected = m;
      }
      return null;
    }
  }
}
