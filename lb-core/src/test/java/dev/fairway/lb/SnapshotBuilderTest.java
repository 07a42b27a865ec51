package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The snapshot builder and the membership diff alone, without a balancer. */
class SnapshotBuilderTest {
  static final long S = 1_000_000_000L;
  final SlowStart slowStart = new SlowStart(10 * S);
  final TargetHealth.Rules rules = new TargetHealth.Rules(slowStart, PassiveHealth.defaults(), null);

  TrackedTarget tracked(Target target, boolean warm, long now) {
    return new TrackedTarget(target, new TargetHealth(rules, TargetHealth.State.joined(warm, target.healthy(), now,
        slowStart)), null);
  }

  Membership members(List<Target> list, boolean warm, long now) {
    Membership.Change c = Membership.NONE.next("svc", list, target -> tracked(target, warm, now));
    c.commit();
    return c.next;
  }

  @Test
  void build_weighsWarmingTargetsBySlowStart_andSaysWhenToLookAgain() {
    Membership m = members(List.of(t(1).withWeight(2), t(2)), true, 0);
    TargetSnapshot s = new SnapshotBuilder(50, slowStart).build(m, 5 * S);
    assertThat(s.weights).containsExactly(2 * 55, 55); // step 5 of 10: 10% + 45%
    assertThat(s.reviewAtNanos).isEqualTo(6 * S);
    TargetSnapshot later = new SnapshotBuilder(50, slowStart).build(m, 10 * S);
    assertThat(later.weights).containsExactly(200, 100);
  }

  @Test
  void build_changesNoState_evenWhenAnEjectionEnded() {
    Membership m = members(List.of(t(1), t(2), t(3)), false, 0);
    TrackedTarget one = m.members[0];
    one.health.apply(one, TargetHealth.Event.EJECT, 0, "test");
    SnapshotBuilder builder = new SnapshotBuilder(50, slowStart);
    TargetSnapshot during = builder.build(m, 5 * S);
    assertThat(during.pickable).containsExactly(m.members[1], m.members[2]);
    assertThat(during.reviewAtNanos).isEqualTo(10 * S);
    TargetSnapshot after = builder.build(m, 10 * S);
    assertThat(after.pickable).hasSize(3);
    assertThat(after.trialTargets).isEqualTo(1);
    assertThat(after.reviewAtNanos).isEqualTo(10 * S); // the trial is due: the updater applies it
    assertThat(one.health.state().phase).isEqualTo(HealthPhase.EJECTED);
    assertThat(one.pickable).isFalse();
  }

  @Test
  void build_panicsBelowTheThreshold_andPicksFromEveryMember() {
    Membership m = members(List.of(t(1).withHealthy(false), t(2).withHealthy(false), t(3)), false, 0);
    TargetSnapshot s = new SnapshotBuilder(50, slowStart).build(m, 0);
    assertThat(s.panic).isTrue();
    assertThat(s.pickable).hasSize(3);
    TargetSnapshot calm = new SnapshotBuilder(0, slowStart).build(m, 0);
    assertThat(calm.panic).isFalse();
    assertThat(calm.pickable).containsExactly(m.members[2]);
  }

  @Test
  void membershipNext_touchesNoMemberUntilCommitted() {
    Membership m = members(List.of(t(1), t(2)), false, 0);
    TrackedTarget one = m.members[0];
    TrackedTarget two = m.members[1];
    Membership.Change c = m.next("svc", List.of(t(2).withWeight(5), t(3)), target -> tracked(target, true, 0));
    assertThat(c.left).containsExactly(one);
    assertThat(c.joined).extracting(x -> x.target).containsExactly(t(3));
    assertThat(one.removed).isFalse();
    assertThat(two.target.weight()).isEqualTo(1);
    assertThat(m.members).containsExactly(one, two);
    c.commit();
    assertThat(one.removed).isTrue();
    assertThat(two.target.weight()).isEqualTo(5);
    assertThat(c.next.members[0]).isSameAs(two);
    assertThat(c.next.version).isEqualTo(m.version + 1);
    assertThat(c.next.next("svc", List.of(t(2).withWeight(5), t(3)), target -> tracked(target, true, 0)).next)
        .as("an unchanged list is the same membership").isSameAs(c.next);
  }
}
