package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ring alone: an incremental rebuild gives exactly the ring a full build gives. */
class ConsistentHashRingTest {
  final TargetHealth.Rules rules = new TargetHealth.Rules(new SlowStart(0), PassiveHealth.disabled(), null);

  TrackedTarget tracked(Target t) {
    return new TrackedTarget(t, new TargetHealth(rules, TargetHealth.State.joined(false, true, 0, rules.slowStart)), null);
  }

  List<TrackedTarget> members(int n) {
    List<TrackedTarget> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(tracked(Target.of("10.4." + (i / 250) + "." + (i % 250), 80).withWeight(1 + i % 4)));
    }
    return out;
  }

  @Test
  void replacingOneMember_keepsEveryOtherPoint_andEqualsAFullBuild() {
    List<TrackedTarget> before = members(1000);
    ConsistentHashStrategy.Ring first = ConsistentHashStrategy.Ring.build(before.toArray(new TrackedTarget[0]), 1, null);
    List<TrackedTarget> after = new ArrayList<>(before);
    TrackedTarget newcomer = tracked(Target.of("10.9.9.9", 80).withWeight(1 + 500 % 4));
    TrackedTarget gone = after.set(500, newcomer);
    TrackedTarget[] next = after.toArray(new TrackedTarget[0]);
    ConsistentHashStrategy.Ring incremental = ConsistentHashStrategy.Ring.build(next, 2, first);
    ConsistentHashStrategy.Ring full = ConsistentHashStrategy.Ring.build(next, 2, null);
    assertThat(incremental.points).containsExactly(full.points);
    assertThat(incremental.owners).containsExactly(full.owners);
    assertThat(incremental.owners).doesNotContain(gone);
    int moved = 0;
    for (int k = 0; k < 10_000; k++) {
      long h = ConsistentHashStrategy.keyHash("user-" + k);
      TrackedTarget was = first.owners[first.locate(h)];
      TrackedTarget now = incremental.owners[incremental.locate(h)];
      if (was != now) {
        assertThat(was == gone || now == newcomer).as("only keys of the replaced member or onto the newcomer move")
            .isTrue();
        moved++;
      }
    }
    assertThat(moved).isBetween(1, 60); // about 2 in 1,000 of the keys
  }

  @Test
  void locate_findsTheFirstPointAtOrAfterTheHash_wrappingAtTheEnd() {
    ConsistentHashStrategy.Ring ring =
        ConsistentHashStrategy.Ring.build(members(3).toArray(new TrackedTarget[0]), 1, null);
    long[] p = ring.points;
    for (int i = 0; i < p.length; i++) {
      assertThat(ring.locate(p[i])).isEqualTo(i);
      assertThat(ring.locate(p[i] - (1L << 20))).isEqualTo(i == 0 || p[i - 1] < p[i] - (1L << 20) ? i : i - 1);
    }
    assertThat(ring.locate(Long.MAX_VALUE)).isZero();
    assertThat(ring.locate(Long.MIN_VALUE)).isZero();
  }
}
