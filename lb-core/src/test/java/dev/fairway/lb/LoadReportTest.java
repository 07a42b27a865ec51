package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Load reports handed to a pick: what is kept, for how long, and how the load-reading strategies use them. */
class LoadReportTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Strategy strategy, Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(strategy).build();
  }

  /** One call on {@code target} taking {@code ms}, whose response carried the given report. */
  static void call(LoadBalancer lb, Fixtures.FakeTicker ticker, Target target, long ms, double utilization,
      double inFlight) throws Exception {
    Set<Target> others = new java.util.HashSet<>();
    for (TargetStatus s : lb.status()) {
      if (!s.target().equals(target)) {
        others.add(s.target());
      }
    }
    Pick p = lb.pick(null, others);
    assertThat(p.target()).isEqualTo(target);
    ticker.advanceMillis(ms);
    p.reportLoad(utilization, inFlight);
    p.success();
  }

  static TargetStatus status(LoadBalancer lb, Target target) {
    return lb.status().stream().filter(s -> s.target().equals(target)).findFirst().orElseThrow();
  }

  @Test
  void reportLoad_isKeptWithItsTime_andExpiresAfterFiveSeconds() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1));
    Pick p = lb.pick();
    p.reportLoad(0.625, 5);
    TrackedTarget tracked = ((PickHandle) p).tracked();
    assertThat(tracked.reportedUtilization).isEqualTo(0.625);
    assertThat(tracked.reportedInFlight).isEqualTo(5.0);
    assertThat(tracked.reportStampNanos).isEqualTo(ticker.read());
    assertThat(tracked.inFlightAtReport).isEqualTo(1);
    p.success();
    assertThat(status(lb, t(1)).reportedUtilization()).isEqualTo(0.625);
    assertThat(status(lb, t(1)).reportedInFlight()).isEqualTo(5.0);
    ticker.advanceMillis(4_999);
    assertThat(status(lb, t(1)).reportedInFlight()).isEqualTo(5.0);
    ticker.advanceMillis(1);
    assertThat(status(lb, t(1)).reportedUtilization()).isNaN();
    assertThat(status(lb, t(1)).reportedInFlight()).isNaN();
  }

  @Test
  void reportLoad_ignoresNaNNegativeAndInfiniteValues_andAnythingAfterTheCompletion() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1));
    Pick p = lb.pick();
    p.reportLoad(Double.NaN, -1);
    p.reportLoad(Double.POSITIVE_INFINITY, Double.NaN);
    TrackedTarget tracked = ((PickHandle) p).tracked();
    assertThat(tracked.reported).isFalse();
    p.reportLoad(-0.5, 3);
    assertThat(tracked.reportedUtilization).isNaN();
    assertThat(tracked.reportedInFlight).isEqualTo(3.0);
    p.success();
    p.reportLoad(0.9, 7); // after the completion: ignored
    assertThat(tracked.reportedInFlight).isEqualTo(3.0);
    assertThat(tracked.reportedUtilization).isNaN();
  }

  /**
   * The report's count plus the change in our own calls since: the call it answered has left, and
   * six of ours were sent. Before, the answered call was never taken off (4 here after the call).
   */
  @Test
  void fleetInFlight_isTheReportPlusTheChangeInThisBalancersCalls_neverBelowItsOwn() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1));
    call(lb, ticker, t(1), 10, 0.5, 4);
    TrackedTarget tracked = lb.snapshot().members[0];
    long now = ticker.read();
    assertThat(FleetLoad.inFlight(tracked, now)).isEqualTo(3.0); // 4 - the answered call
    List<Pick> held = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      held.add(lb.pick());
    }
    assertThat(FleetLoad.inFlight(tracked, now)).isEqualTo(9.0); // 4 + (6 - 1)
    ticker.advanceMillis(5_000);
    assertThat(FleetLoad.inFlight(tracked, ticker.read())).isEqualTo(6.0); // expired: own
    held.forEach(Pick::release);
  }

  /** Makes both targets' reports fully believed, as agreeing reports do over time ({@link ReportJudge}). */
  static void trustBoth(LoadBalancer lb) {
    for (TrackedTarget t : lb.published().snapshot.pickable) { // not by a pick: that would draw a random number
      t.trust = 1.0;
    }
  }

  @Test
  void leastConnections_usesAFreshReportsCountFromEveryClient() throws Exception {
    LoadBalancer lb = lb(Strategy.leastConnections(), t(1), t(2));
    call(lb, ticker, t(1), 10, 1.25, 10); // other clients keep 10 calls on target 1
    call(lb, ticker, t(2), 10, 0.25, 2);
    trustBoth(lb);
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      held.add(name(lb.pick().target())); // held: this balancer's calls add to the reported counts
    }
    // 2 is chosen while its count (2 + its calls since the report) is below 10; the tenth pick is a tie
    // (10 and 10), broken by the seeded random start.
    assertThat(held).containsExactly("2", "2", "2", "2", "2", "2", "2", "2", "2", "1");
  }

  @Test
  void leastConnections_ignoresAnExpiredReport() throws Exception {
    LoadBalancer lb = lb(Strategy.leastConnections(), t(1), t(2));
    call(lb, ticker, t(1), 10, 1.25, 10);
    call(lb, ticker, t(2), 10, 0.25, 2);
    ticker.advanceMillis(5_000);
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      held.add(name(lb.pick().target()));
    }
    assertThat(Fixtures.counts(held)).containsEntry("1", 2).containsEntry("2", 2); // own counts only
  }

  @Test
  void powerOfTwoChoices_usesAFreshReportsCountFromEveryClient() throws Exception {
    LoadBalancer lb = lb(Strategy.powerOfTwoChoices(), t(1), t(2));
    call(lb, ticker, t(1), 10, 1.25, 10);
    call(lb, ticker, t(2), 10, 0.25, 2);
    trustBoth(lb);
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      held.add(name(lb.pick().target()));
    }
    assertThat(held).containsOnly("2"); // 2 + 7 own < 10: with two targets both are always compared
  }
}
