package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Load reports that lie about this balancer's own calls ({@link ReportJudge.Verdict#IMPLAUSIBLE}):
 * counted in {@code fairway.load.reports{result=implausible}} and read as our own count; honest
 * reports in every style never are. Exact, on a fake ticker; the fleet cases are the closed-loop
 * simulation on that ticker ({@link FakeFleet}).
 */
class ImplausibleReportTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  LoadBalancer lb(Strategy strategy, Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(strategy).meterRegistry(registry).build();
  }

  double implausible() {
    Counter c = registry.find("fairway.load.reports").tag("service", "svc").tag("result", "implausible").counter();
    return c == null ? 0 : c.count();
  }

  /**
   * With 4 of our calls on the target, a report may leave out the answered one and half a call on
   * the wire (4 / 8, rounded down: none), so 3 is plausible and 2 is not. The lie is read as our own
   * count, never below it.
   */
  @Test
  void aReportOfFewerCallsThanOurs_isCountedImplausible_andReadAsOurOwnCount() throws Exception {
    LoadBalancer lb = lb(Strategy.leastConnections(), t(1));
    Pick[] picks = new Pick[4];
    for (int i = 0; i < picks.length; i++) {
      picks[i] = lb.pick();
    }
    ticker.advanceMillis(10);
    picks[0].reportLoad(0.5, 3);
    assertThat(implausible()).isZero();
    picks[1].reportLoad(0.5, 2);
    assertThat(implausible()).isEqualTo(1.0);
    TrackedTarget tracked = ((PickHandle) picks[1]).tracked();
    assertThat(FleetLoad.inFlight(tracked, ticker.read())).isEqualTo(4.0); // ours, not the report's 2
    picks[2].reportLoad(Double.NaN, Double.NaN); // no values: neither kept nor counted
    assertThat(implausible()).isEqualTo(1.0);
    for (Pick p : picks) {
      p.release();
    }
    lb.close();
  }

  /**
   * {@code fairway.load.reports} has no {@code balancer} tag, so two balancers of one service count
   * into one counter: closing one must not remove it from under the other.
   */
  @Test
  void twoBalancersOfOneService_shareTheImplausibleReportsCounter_untilTheLastCloses() throws Exception {
    LoadBalancer first = lb(Strategy.leastQueueing(), t(1));
    LoadBalancer second = lb(Strategy.leastQueueing(), t(1));
    lieOnce(first);
    lieOnce(second);
    assertThat(implausible()).isEqualTo(2.0);
    first.close();
    assertThat(implausible()).isEqualTo(2.0); // still registered
    lieOnce(second);
    assertThat(implausible()).isEqualTo(3.0);
    second.close();
    assertThat(registry.find("fairway.load.reports").counters()).isEmpty();
  }

  /** One report of 0 in flight with 2 of ours on the target: implausible. */
  private static void lieOnce(LoadBalancer lb) throws Exception {
    Pick a = lb.pick();
    Pick b = lb.pick();
    a.reportLoad(0, 0);
    a.release();
    b.release();
  }

  /** A fleet run, with the implausible reports counted while its balancers were open. */
  double fleetImplausible(String strategy, int clients, ReportFleetTest.Style style) throws Exception {
    FakeFleet fleet = new FakeFleet(ticker, registry);
    double[] counted = new double[1];
    fleet.run(Strategy.named(strategy), clients, 100, 3_000, 33_000, new ReportFleetTest.Reports(style),
        () -> counted[0] = implausible());
    System.out.printf("implausible reports, %s, %d clients, %s: %.0f (served %s)%n", strategy, clients, style,
        counted[0], Arrays.toString(fleet.served));
    return counted[0];
  }

  /**
   * Honest reports in each style are never counted, under the strategies that read them and under
   * the default, which does not (our own counts there differ): utilization capped at 1 or not, the
   * answered call counted in rif or not, the starter's filter on Tomcat.
   */
  @ParameterizedTest(name = "{0}, {1} clients, {2}")
  @CsvSource({
      "least-queueing, 1, UNCAPPED", "least-queueing, 50, CAPPED_COUNTS_ANSWERED", "least-queueing, 50, TOMCAT_200",
      "least-connections, 1, CAPPED", "least-connections, 50, UNCAPPED_COUNTS_ANSWERED",
      "power-of-two-choices, 50, CAPPED",
  })
  void honestReportsInEveryStyle_areNeverCountedImplausible(String strategy, int clients, ReportFleetTest.Style style)
      throws Exception {
    assertThat(fleetImplausible(strategy, clients, style)).isZero();
  }

  /** The liar that claims nothing in flight is caught whenever more than one of our calls are there. */
  @ParameterizedTest(name = "{0}, {1} clients")
  @CsvSource({"least-connections, 1", "least-queueing, 1"})
  void aLiarClaimingNoCalls_isCountedImplausible(String strategy, int clients) throws Exception {
    assertThat(fleetImplausible(strategy, clients, ReportFleetTest.Style.LIAR_RIF0)).isPositive();
  }
}
