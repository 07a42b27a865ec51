package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What lb-core gives hedging (issue 26): {@link LoadBalancer#pickWithFreeWorker} for the hedge's
 * target, and {@link Pick#superseded} for the copy that lost, on fake time.
 */
class HedgeSupportTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Strategy strategy, Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(strategy).build();
  }

  static TargetStatus status(LoadBalancer lb, Target target) {
    return lb.status().stream().filter(s -> s.target().equals(target)).findFirst().orElseThrow();
  }

  /** A pick on {@code target} alone. */
  static Pick pickOn(LoadBalancer lb, Target target) throws Exception {
    Set<Target> others = new java.util.HashSet<>();
    lb.status().forEach(s -> others.add(s.target()));
    others.remove(target);
    return lb.pick(null, others);
  }

  /**
   * One call of {@code ms} on {@code target}, which did not queue: the balancer learns that it
   * serves one of our calls at once. Then {@code held} picks on it stay open: with two, one above
   * the learned one and its probe, every worker is known busy; with none, one is free.
   */
  java.util.List<Pick> learnOneWorker(LoadBalancer lb, Target target, long ms, int held) throws Exception {
    Pick p = pickOn(lb, target);
    ticker.advanceMillis(ms);
    p.success();
    java.util.List<Pick> out = new java.util.ArrayList<>();
    for (int i = 0; i < held; i++) {
      out.add(pickOn(lb, target));
    }
    return out;
  }

  @Test
  void aHedgePickThatExcludesTheHome_movesNoKey_underEitherAffinityStrategy() throws Exception {
    for (Strategy strategy : new Strategy[] {Strategy.keyAffinity(), Strategy.consistentHash()}) {
      LoadBalancer lb = lb(strategy, t(1), t(2), t(3));
      for (String key : new String[] {"alice", "bob", "carol", "dave"}) {
        Pick first = lb.pick(key);
        Target home = first.target();
        Pick hedge = lb.pickWithFreeWorker(key, Set.of(home));
        assertThat(hedge).isNotNull();
        assertThat(hedge.target()).as(strategy.name()).isNotEqualTo(home);
        hedge.success(); // the hedge won
        first.superseded(); // the home's copy lost: no failure
        for (int i = 0; i < 3; i++) {
          Pick again = lb.pick(key);
          assertThat(again.target()).as(strategy.name() + " " + key).isEqualTo(home);
          again.success();
        }
      }
      lb.close();
    }
  }

  @Test
  void pickWithFreeWorker_everyOtherTargetBusyByOurOwnCalls_returnsNullAndTakesNoSlot() throws Exception {
    for (Strategy strategy : new Strategy[] {Strategy.leastResponseTime(), Strategy.roundRobin(), Strategy.leastQueueing()}) {
      LoadBalancer lb = lb(strategy, t(1), t(2), t(3));
      java.util.List<Pick> held = new java.util.ArrayList<>(learnOneWorker(lb, t(2), 10, 2));
      held.addAll(learnOneWorker(lb, t(3), 10, 2));

      assertThat(lb.pickWithFreeWorker(null, Set.of(t(1)))).as(strategy.name()).isNull();
      assertThat(lb.status()).extracting(TargetStatus::inFlight).as(strategy.name()).containsExactly(0, 2, 2);
      held.forEach(Pick::release);
      lb.close();
    }
  }

  /**
   * A fresh report of every worker busy (utilization 1 or more) marks a target busy for the hedge,
   * whatever the strategy: a claim against the target's own interest. It does not change the
   * strategy's own picks.
   */
  @Test
  void pickWithFreeWorker_everyOtherTargetReportedBusy_returnsNullAndTakesNoSlot() throws Exception {
    for (Strategy strategy : new Strategy[] {Strategy.leastResponseTime(), Strategy.roundRobin(), Strategy.leastQueueing()}) {
      LoadBalancer lb = lb(strategy, t(1), t(2), t(3));
      LoadReportTest.call(lb, ticker, t(2), 10, 1.0, 8); // 8 in flight at 8 workers: busy
      LoadReportTest.call(lb, ticker, t(3), 10, 1.0, 8);

      assertThat(lb.pickWithFreeWorker(null, Set.of(t(1)))).as(strategy.name()).isNull();
      assertThat(lb.status()).allSatisfy(s -> assertThat(s.inFlight()).isZero());
      ticker.advanceMillis(5_000); // the reports expire: nothing tells any more
      Pick p = lb.pickWithFreeWorker(null, Set.of(t(1)));
      assertThat(p).as(strategy.name()).isNotNull();
      p.release();
      lb.close();
    }
  }

  /**
   * A load report is not read as a free worker: a report claims 6 of 8 workers free (2 in flight at
   * utilization 0.25) on a target whose every worker our own calls show busy, and the hedge still
   * gets nothing. Before, the claim made it a hedge target.
   */
  @Test
  void pickWithFreeWorker_aReportClaimingFreeWorkers_isNotReadAsOne() throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1), t(2));
    java.util.List<Pick> held = learnOneWorker(lb, t(2), 10, 2);
    held.get(0).reportLoad(0.25, 2);
    assertThat(lb.pickWithFreeWorker(null, Set.of(t(1)))).isNull();
    held.forEach(Pick::release);
  }

  @Test
  void pickWithFreeWorker_choosesTheTargetWithAFreeWorker_whateverTheStrategyPrefers() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1), t(2), t(3));
    java.util.List<Pick> held = learnOneWorker(lb, t(2), 1, 2); // fastest, but every worker busy
    learnOneWorker(lb, t(3), 50, 0); // slow, its worker free

    for (int i = 0; i < 5; i++) {
      Pick p = lb.pickWithFreeWorker(null, Set.of(t(1)));
      assertThat(p).isNotNull();
      assertThat(p.target()).isEqualTo(t(3));
      p.release();
    }
    Pick plain = lb.pick(null, Set.of(t(1)));
    assertThat(plain.target()).isEqualTo(t(2)); // the plain pick still prefers it: 1 ms x 3 < 50 ms
    plain.release();
    held.forEach(Pick::release);
  }

  @Test
  void pickWithFreeWorker_withoutReports_usesTheConcurrencyLearnedFromOwnCalls_underEveryStrategy() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1), t(2));
    // Two calls at once on t(2), neither queued (10 ms, its service time): it serves 2 at once.
    Pick a = lb.pick(null, Set.of(t(1)));
    Pick b = lb.pick(null, Set.of(t(1)));
    ticker.advanceMillis(10);
    a.success();
    b.success();
    Pick one = lb.pick(null, Set.of(t(1)));
    Pick two = lb.pick(null, Set.of(t(1)));
    Pick three = lb.pick(null, Set.of(t(1))); // a third: more than it serves at once

    assertThat(lb.pickWithFreeWorker(null, Set.of(t(1)))).isNull();
    three.release();
    two.release();
    Pick free = lb.pickWithFreeWorker(null, Set.of(t(1)));
    assertThat(free).isNotNull();
    assertThat(free.target()).isEqualTo(t(2));
    free.release();
    one.release();
  }

  @Test
  void pickWithFreeWorker_noSignal_isNotKnownBusy_andNoTargetAtAllStillThrows() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1), t(2));
    Pick p = lb.pickWithFreeWorker(null, Set.of(t(1)));
    assertThat(p).isNotNull(); // never measured: hedged as before
    assertThat(p.target()).isEqualTo(t(2));
    p.release();
    assertThatThrownBy(() -> lb.pickWithFreeWorker(null, Set.of(t(1), t(2))))
        .isInstanceOf(NoTargetAvailableException.class);
  }

  /**
   * Issue 26, item 3: with hedging on, least response time lost 10-15 points of throughput in the
   * lab's jitter. A copy that lost to a hedge was only released, so a target whose slow calls were
   * all won by hedges never got a slow sample: its peak-EWMA stayed low (or was never measured) and
   * the strategy sent it more calls. Now the loser's running time is a lower bound of its latency.
   */
  @Test
  void superseded_raisesTheLatencyAverageToTheTimeTheCopyRan_soLeastResponseTimeAvoidsTheSlowTarget() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1), t(2));
    Pick fast = lb.pick(null, Set.of(t(2)));
    ticker.advanceMillis(10);
    fast.success(); // t(1): 10 ms
    Pick slow = lb.pick(null, Set.of(t(1)));
    ticker.advanceMillis(80); // the hedge fired and won; t(2)'s copy is cancelled after 80 ms
    slow.superseded();

    assertThat(status(lb, t(2)).latencyEwmaMillis()).isEqualTo(80.0);
    assertThat(status(lb, t(2)).inFlight()).isZero();
    for (int i = 0; i < 4; i++) { // before the fix t(2) was unmeasured and idle: cost 0, chosen first
      Pick p = lb.pick();
      assertThat(p.target()).isEqualTo(t(1));
      p.release();
    }
  }

  @Test
  void superseded_belowTheAverage_changesNothing_andIsNeitherSuccessNorFailure() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1));
    Pick p = lb.pick();
    ticker.advanceMillis(50);
    p.success();
    Pick q = lb.pick();
    ticker.advanceMillis(5);
    q.superseded();
    q.failure(new java.io.IOException("after the completion: ignored"));

    assertThat(status(lb, t(1)).latencyEwmaMillis()).isEqualTo(50.0);
    assertThat(status(lb, t(1)).state()).isEqualTo(TargetState.HEALTHY);
    assertThat(status(lb, t(1)).inFlight()).isZero();
  }

  @Test
  void supersededHoldingSlot_recordsTheLowerBoundNow_keepsTheSlotUntilRelease() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1), t(2));
    Pick fast = lb.pick(null, Set.of(t(2)));
    ticker.advanceMillis(10);
    fast.success();
    Pick slow = lb.pick(null, Set.of(t(1)));
    ticker.advanceMillis(80); // the hedge won; t(2)'s copy is cancelled, its server still on it
    slow.supersededHoldingSlot();

    assertThat(status(lb, t(2)).latencyEwmaMillis()).isEqualTo(80.0);
    assertThat(status(lb, t(2)).inFlight()).isEqualTo(1);
    ticker.advanceMillis(5_000); // released much later: the lower bound stays the time it ran
    slow.release();
    assertThat(status(lb, t(2)).inFlight()).isZero();
    assertThat(status(lb, t(2)).latencyEwmaMillis()).isLessThanOrEqualTo(80.0);
    assertThat(status(lb, t(2)).state()).isEqualTo(TargetState.HEALTHY);
    slow.supersededHoldingSlot(); // after the completion: nothing
    assertThat(status(lb, t(2)).inFlight()).isZero();
  }

  @Test
  void pickWithFreeWorker_withAJudge_asksAboutBusyAndUnknownTargets_notAboutFreeOnes() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1), t(2), t(3), t(4));
    java.util.List<Pick> held = learnOneWorker(lb, t(2), 10, 2); // busy
    learnOneWorker(lb, t(3), 10, 0); // free
    // t(4): never measured, nothing tells
    java.util.Map<Target, Boolean> asked = new java.util.concurrent.ConcurrentHashMap<>();

    Pick p = lb.pickWithFreeWorker(null, Set.of(t(1)), (target, knownBusy) -> {
      asked.put(target, knownBusy);
      return false;
    });
    assertThat(p).isNotNull();
    assertThat(p.target()).isEqualTo(t(3)); // the free one, the only candidate left
    p.release();
    assertThat(asked).containsOnly(java.util.Map.entry(t(2), true), java.util.Map.entry(t(4), false));

    assertThat(lb.pickWithFreeWorker(null, Set.of(t(1), t(3)), (target, knownBusy) -> false)).isNull();
    assertThat(lb.status()).extracting(TargetStatus::inFlight).containsExactly(0, 2, 0, 0);
    Pick queued = lb.pickWithFreeWorker(null, Set.of(t(1), t(3), t(4)), (target, knownBusy) -> knownBusy);
    assertThat(queued).isNotNull();
    assertThat(queued.target()).isEqualTo(t(2)); // accepted although busy
    queued.release();
    held.forEach(Pick::release);
  }
}
