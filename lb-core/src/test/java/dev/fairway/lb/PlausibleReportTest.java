package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.t;
import static dev.fairway.lb.LoadReportTest.call;
import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Load reports that disagree with what the balancer sees itself ({@link ReportPlausibility#record}):
 * what is discarded and counted, what is capped, and that honest reports in every style are kept.
 * Exact, on a fake ticker; the fleet cases are a closed-loop simulation on that ticker.
 */
class PlausibleReportTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  LoadBalancer lb(Strategy strategy, Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(strategy).meterRegistry(registry).build();
  }

  double discarded(String result) {
    Counter c = registry.find("fairway.load.reports").tag("service", "svc").tag("result", result).counter();
    return c == null ? 0 : c.count();
  }

  static List<String> held(LoadBalancer lb, int n, List<Pick> open) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Pick p = lb.pick();
      open.add(p);
      out.add(name(p.target()));
    }
    return out;
  }

  @Test
  void aReportImplyingInfiniteWorkers_doesNotMakeTheTargetColdForever() throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1), t(2));
    call(lb, ticker, t(1), 10, 1e-10, 1e300); // 1e300 / 1e-10: Infinity workers
    call(lb, ticker, t(2), 20, 0.25, 2); // 8 workers
    assertThat(LeastQueueingTest.tracked(lb, t(1)).reportedWorkers).isEqualTo(8.0); // 8 x our 1 call there
    List<Pick> open = new ArrayList<>();
    // Before the cap, 1 (10 ms) was cold forever: 1e300 calls < Infinity workers. Now it claims
    // 1e300 calls on 8 workers: hot, and dearer than 2 whatever 2 carries.
    assertThat(held(lb, 12, open)).containsOnly("2");
    open.forEach(Pick::release);
    assertThat(discarded("implausible")).isZero(); // more calls than ours: no lie about ours
  }

  @Test
  void aReportImplyingAMillionWorkers_isBelievedOnlyAsFarAsOurOwnCallsThere() throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1), t(2));
    call(lb, ticker, t(1), 10, 0.000001, 1); // the lab's liar: a million workers
    call(lb, ticker, t(2), 20, 0.25, 2); // 8 workers
    List<Pick> open = new ArrayList<>();
    List<String> seq = held(lb, 20, open);
    open.forEach(Pick::release);
    TrackedTarget one = LeastQueueingTest.tracked(lb, t(1)); // after the sequence: it picks too
    assertThat(one.reportedWorkers).isEqualTo(1.0); // our 1 call there when it reported
    // 1 (10 ms) claims 1 call on 1 worker: hot. 2 (20 ms) is cold while 2 reported, less the
    // answered call, plus ours since, is below its 8 workers: 7 calls. Then both hot, each call to
    // the one where it would be done first: 1, whose claim was capped, at what this balancer
    // measures itself, 10 ms x (our calls + 1); 2 at 20 ms x (its count + 1) / 8; a tie (indexes 12
    // and 17: 30 and 40 ms each) goes to where the seeded scan starts. Before this rule 1 counted 8
    // workers and took the first 8 calls; before the cap, all 20.
    assertThat(seq).containsExactly("2", "2", "2", "2", "2", "2", "2", "1", "1", "2", "2", "2", "1", "2", "2", "2",
        "2", "1", "2", "2");
  }

  @Test
  void aReportOfFewerCallsThanOurs_isDiscardedAndCounted_andTwoInARowFallBackForThirtySeconds() throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1));
    call(lb, ticker, t(1), 10, 0.25, 2);
    List<Pick> open = new ArrayList<>();
    held(lb, 5, open); // 5 of ours on 1
    TrackedTarget one = ((PickHandle) open.get(0)).tracked();
    long keptAt = one.reportStampNanos;
    // 5 of ours, less the answered call, less 5 / 8 on the wire (0): at least 4.
    open.get(0).reportLoad(0.5, 4);
    assertThat(one.reportStampNanos).isEqualTo(ticker.read()).isNotEqualTo(keptAt - 1);
    assertThat(one.reportedInFlight).isEqualTo(4.0);
    ticker.advanceMillis(1);
    open.get(1).reportLoad(0.1, 3); // 3 < 4: a lie about our own calls
    assertThat(one.reportedInFlight).isEqualTo(4.0); // discarded: the last kept one stays
    assertThat(discarded("implausible")).isEqualTo(1.0);
    open.get(2).reportLoad(0.000001, 1); // the second in a row: 1 falls back to unreported scoring
    assertThat(discarded("implausible")).isEqualTo(2.0);
    assertThat(one.reported).isFalse();
    assertThat(lb.status().get(0).reportedInFlight()).isNaN();
    ticker.advanceMillis(29_999);
    open.get(3).reportLoad(0.5, 4); // plausible, but 1's reports are not used for 30 s
    assertThat(discarded("distrusted")).isEqualTo(1.0);
    assertThat(one.reported).isFalse();
    ticker.advanceMillis(1);
    open.get(4).reportLoad(0.5, 4);
    assertThat(one.reported).isTrue();
    assertThat(one.reportedInFlight).isEqualTo(4.0);
    assertThat(discarded("implausible")).isEqualTo(2.0);
    assertThat(discarded("distrusted")).isEqualTo(1.0);
    open.forEach(Pick::release);
  }

  @Test
  void aZeroUtilizationAloneWithOurCallsOut_isDiscarded() throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1));
    call(lb, ticker, t(1), 10, 0.25, 2);
    List<Pick> open = new ArrayList<>();
    held(lb, 2, open);
    open.get(0).reportLoad(0, Double.NaN); // "cpu_utilization=0" with 2 of ours there: claims 0 < 1
    assertThat(discarded("implausible")).isEqualTo(1.0);
    open.get(0).release();
    open.get(1).reportLoad(0, Double.NaN); // alone: the answered call may be all there is
    assertThat(discarded("implausible")).isEqualTo(1.0);
    assertThat(((PickHandle) open.get(1)).tracked().reportedUtilization).isZero();
    open.get(1).release();
  }

  /**
   * A report implying more workers than the cap while claiming fewer calls than the cap is believed
   * only as far as our own calls there: here 2 of ours at the report, so 2 workers, not 16. When the
   * call it answers took over 4 x the fastest answer of any target (10 ms here: 40 ms), not even
   * that: its own count, 1, so no free worker at all. Before, the claim counted 8 x 2 = 16 workers
   * either way, 15 of them free.
   */
  @ParameterizedTest
  @CsvSource({"30, 2.0", "40, 2.0", "41, 1.0", "500, 1.0"})
  void aCappedClaimOfFreeWorkers_isBelievedOnlyAsFarAsOurCallsThere(long answerMs, double workers) throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1), t(2));
    call(lb, ticker, t(1), 10, 0.25, 2); // honest, 10 ms: the fastest answer of any target
    java.util.Set<Target> notOne = java.util.Set.of(t(1));
    Pick a = lb.pick(null, notOne);
    Pick b = lb.pick(null, notOne);
    assertThat(List.of(name(a.target()), name(b.target()))).containsExactly("2", "2");
    ticker.advanceMillis(answerMs);
    a.reportLoad(0.000001, 1); // the lab's liar: a million workers, 2 of ours there
    TrackedTarget two = ((PickHandle) a).tracked();
    assertThat(two.reportedWorkers).isEqualTo(workers);
    assertThat(two.reported).isTrue();
    a.success();
    b.release();
    assertThat(discarded("implausible") + discarded("distrusted")).isZero();
  }

  /**
   * A capped claim of free workers and a call of ours that waited (over 2 x the target's fastest
   * answer) after it: one such disagreement falls back at once, where an honest report needs two in
   * a row. Before, the first disagreement was only counted, and the liar kept drawing calls.
   */
  @Test
  void aCappedClaimThatOurCallWaitedOn_fallsBackAtOnce_anHonestOneDoesNot() throws Exception {
    LoadBalancer lb = lb(Strategy.leastQueueing(), t(1), t(2));
    call(lb, ticker, t(1), 10, 0.125, 1); // honest, 8 workers, 10 ms
    call(lb, ticker, t(2), 10, 0.000001, 1); // liar, 10 ms: kept, believed as 1 worker
    TrackedTarget one = LeastQueueingTest.tracked(lb, t(1));
    TrackedTarget two = LeastQueueingTest.tracked(lb, t(2));
    assertThat(two.reportCapped).isTrue();
    assertThat(one.reportCapped).isFalse();
    call(lb, ticker, t(1), 30, 0.125, 1); // waited (30 > 2 x 10 ms) after a claim of 7 free workers
    assertThat(one.reported).isTrue(); // one disagreement: counted, not yet a fallback
    assertThat(one.disagreements).isEqualTo(1);
    call(lb, ticker, t(2), 30, 0.000001, 1); // the same for the liar
    assertThat(two.reported).isFalse();
    assertThat(two.distrusted(ticker.read())).isTrue();
    assertThat(two.distrustedUntilNanos).isEqualTo(ticker.read() + ReportPlausibility.DISTRUST_BASE_NANOS);
    assertThat(discarded("distrusted")).isEqualTo(1.0);
    assertThat(discarded("implausible")).isZero();
  }

  /**
   * {@code fairway.load.reports} has no {@code balancer} tag, so two balancers of one service count
   * into one counter: closing one must not remove it from under the other. Before, the first close
   * removed it, and the other balancer went on counting into a meter the registry no longer had.
   */
  @Test
  void twoBalancersOfOneService_shareTheDiscardedReportsCounter_untilTheLastCloses() throws Exception {
    LoadBalancer first = lb(Strategy.leastQueueing(), t(1));
    LoadBalancer second = lb(Strategy.leastQueueing(), t(1));
    discardOne(first);
    discardOne(second);
    assertThat(discarded("implausible")).isEqualTo(2.0);
    first.close();
    assertThat(discarded("implausible")).isEqualTo(2.0); // still registered
    discardOne(second);
    assertThat(discarded("implausible")).isEqualTo(3.0);
    second.close();
    assertThat(registry.find("fairway.load.reports").counters()).isEmpty();
  }

  /** One report of 0 in flight with 2 of ours on the target: discarded as implausible. */
  private static void discardOne(LoadBalancer lb) throws Exception {
    Pick a = lb.pick();
    Pick b = lb.pick();
    a.reportLoad(0, 0);
    a.release();
    b.release();
  }

  /** The fleet simulation's runs: its discarded reports, counted while its balancers were open. */
  final class Fleet {
    final FakeFleet fleet = new FakeFleet(ticker, registry);
    double implausible;
    double distrusted;

    /**
     * Each answer carries a report in {@code style} (utilization capped at 1 or not, the answered
     * call counted in rif or not), except target 4's when {@code liar}: always utilization 0.000001,
     * rif 1.
     */
    void run(Strategy strategy, int clients, boolean liar, String style) throws Exception {
      boolean capped = style.contains("capped") && !style.contains("uncapped");
      boolean countsAnswered = style.contains("rif-counts-answered");
      FakeFleet.Reporter reporter = (pick, target, load) -> {
        if (liar && target == 3) {
          pick.reportLoad(0.000001, 1);
        } else {
          int rif = countsAnswered ? load : load - 1;
          double u = (double) rif / FakeFleet.WORKERS;
          pick.reportLoad(capped ? Math.min(1.0, u) : u, rif);
        }
      };
      fleet.run(strategy, clients, 100, 3_000, 33_000, reporter, () -> {
        implausible = discarded("implausible");
        distrusted = discarded("distrusted");
      });
    }

    double share(int i) {
      return fleet.share(i);
    }

    long p99() {
      return fleet.p99();
    }
  }

  static final double LIAR_CAPACITY_SHARE = FakeFleet.FOUR_CAPACITY_SHARE;

  Fleet fleet(String strategy, int clients, boolean liar, String style) throws Exception {
    Fleet f = new Fleet();
    f.run(Strategy.named(strategy), clients, liar, style);
    System.out.printf("fleet %s, %d clients, liar %s, %s: served %s = %.1f%% of the limit, target 4's share %.3f,"
            + " p99 %d ms, reports discarded: %.0f implausible, %.0f distrusted%n",
        strategy, clients, liar, style, Arrays.toString(f.fleet.served), 100.0 * f.fleet.throughput(), f.share(3),
        f.p99(), f.implausible, f.distrusted);
    return f;
  }

  /**
   * The lab's liar (target 4 always claims utilization 0.000001 and rif 1) among 50 clients: before
   * the rules it drew 0.257 of the calls with least connections and 0.290 with power of two choices
   * in this simulation (4.1 and 4.6 x its capacity share), and no report was counted.
   */
  @ParameterizedTest
  @CsvSource({"least-connections, 1.5", "power-of-two-choices, 1.5"})
  void theLiarsShareAmongFiftyClients_isBounded_andItsReportsAreCounted(String strategy, double bound)
      throws Exception {
    Fleet honest = fleet(strategy, 50, false, "uncapped");
    Fleet lied = fleet(strategy, 50, true, "uncapped");
    // Power of two choices sends target 4 more than its capacity share even when all are honest
    // (0.086 here): its bound is against that run.
    double reference = Math.max(LIAR_CAPACITY_SHARE, honest.share(3));
    assertThat(lied.share(3)).isLessThanOrEqualTo(bound * reference);
    assertThat(lied.distrusted).isPositive();
    assertThat(honest.implausible + honest.distrusted).isZero();
  }

  /** Least queueing met the share before the rules too (0.063): a guard, and the counter. */
  @ParameterizedTest
  @CsvSource({"1", "50"})
  void leastQueueing_keepsTheLiarsShareAtItsCapacity(int clients) throws Exception {
    Fleet lied = fleet("least-queueing", clients, true, "uncapped");
    assertThat(lied.share(3)).isLessThanOrEqualTo(1.5 * LIAR_CAPACITY_SHARE);
    assertThat(lied.implausible + lied.distrusted).isPositive();
  }

  /**
   * The lab's liar scenario as the issue states its targets, for the default strategy: among 50
   * clients, throughput within 3 points of the same fleet with every target honest, p99 at most 1.5 x
   * that fleet's, and the liar's share within 1.5 x its capacity share. Before the capped-claim rules
   * this simulation gave 98.8% against 100.0% and a p99 of 4,700 ms against 1,450 (3.2 x): every
   * client's first liar report drew its users' next calls, and a client's own fastest answer from
   * the liar was already queued, so its calls there never counted as waiting.
   */
  @Test
  void leastQueueing_amongFiftyClients_meetsTheLiarScenariosTargets() throws Exception {
    Fleet honest = fleet("least-queueing", 50, false, "uncapped");
    Fleet lied = fleet("least-queueing", 50, true, "uncapped");
    double honestShare = honest.fleet.throughput();
    double liedShare = lied.fleet.throughput();
    assertThat(liedShare).isGreaterThanOrEqualTo(honestShare - 0.03);
    assertThat((double) lied.p99()).isLessThanOrEqualTo(1.5 * honest.p99());
    assertThat(lied.share(3)).isLessThanOrEqualTo(1.5 * LIAR_CAPACITY_SHARE);
  }

  /**
   * Honest reports in each style are kept, every one: utilization capped at 1 or not, the answered
   * call counted in rif or not. (Whether {@code named_metrics.workers} is sent makes no difference
   * here: the parser reads utilization and rif only.)
   */
  @ParameterizedTest
  @CsvSource({
      "least-queueing, 1, uncapped", "least-queueing, 1, capped", "least-queueing, 1, uncapped rif-counts-answered",
      "least-queueing, 1, capped rif-counts-answered",
      "least-queueing, 50, uncapped", "least-queueing, 50, capped", "least-queueing, 50, uncapped rif-counts-answered",
      "least-queueing, 50, capped rif-counts-answered",
      "least-connections, 50, capped rif-counts-answered", "power-of-two-choices, 50, capped",
  })
  void honestReportsInEveryStyle_areNeverDiscarded(String strategy, int clients, String style) throws Exception {
    Fleet f = fleet(strategy, clients, false, style);
    assertThat(f.implausible).isZero();
    assertThat(f.distrusted).isZero();
  }
}
