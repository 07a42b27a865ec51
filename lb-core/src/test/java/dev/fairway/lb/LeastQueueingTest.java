package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.t;
import static dev.fairway.lb.LoadReportTest.call;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Exact sequences of least queueing, with a seeded random source and a fake ticker. */
class LeastQueueingTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(Strategy.leastQueueing()).build();
  }

  final List<Pick> open = new ArrayList<>();

  /** Picks n times without completing; the picks stay open until {@link #releaseAll}. */
  List<String> held(LoadBalancer lb, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Pick p = lb.pick();
      open.add(p);
      out.add(name(p.target()));
    }
    return out;
  }

  void releaseAll() {
    open.forEach(Pick::release);
    open.clear();
  }

  static Pick pickOf(LoadBalancer lb, Target target) throws Exception {
    Set<Target> others = new HashSet<>();
    lb.status().forEach(s -> others.add(s.target()));
    others.remove(target);
    return lb.pick(null, others);
  }

  /** n calls on target at once, all done after ms: the k-th was sent with k of ours in flight. */
  void concurrent(LoadBalancer lb, Target target, int n, long ms) throws Exception {
    List<Pick> picks = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      picks.add(pickOf(lb, target));
    }
    ticker.advanceMillis(ms);
    picks.forEach(Pick::success);
  }

  static TrackedTarget tracked(LoadBalancer lb, Target target) throws Exception {
    PickHandle p = (PickHandle) pickOf(lb, target);
    p.release();
    return p.tracked();
  }

  /**
   * Least queueing reads no load report: two balancers fed the same calls, one of them every kind of
   * report (a liar's claims of idleness, the starter's filter on Tomcat, a queue, an honest count),
   * choose the same targets call for call. Before, the reports moved its picks (a fresh claim of
   * free workers made a target cold).
   */
  @Test
  void readsNoLoadReport_itsPicksAreTheSameWithAndWithoutThem() throws Exception {
    LoadBalancer reported = lb(t(1), t(2), t(3));
    LoadBalancer unreported = lb(t(1), t(2), t(3));
    long[] serviceMs = {10, 30, 60};
    double[][] claims = {{0.000001, 1}, {0, 0}, {0.005, 1}, {1.5, 12}, {0.25, 2}, {0, Double.NaN}};
    java.util.ArrayDeque<Pick[]> out = new java.util.ArrayDeque<>();
    List<String> withReports = new ArrayList<>();
    List<String> without = new ArrayList<>();
    for (int i = 0; i < 300; i++) {
      Pick a = reported.pick();
      Pick b = unreported.pick();
      withReports.add(name(a.target()));
      without.add(name(b.target()));
      out.add(new Pick[] {a, b});
      if (out.size() == 5) { // five calls out at a time, the oldest answered first
        Pick[] done = out.poll();
        ticker.advanceMillis(serviceMs[Integer.parseInt(name(done[0].target())) - 1]);
        double[] claim = claims[i % claims.length];
        done[0].reportLoad(claim[0], claim[1]);
        done[0].success();
        done[1].success();
      }
    }
    out.forEach(pair -> {
      pair[0].release();
      pair[1].release();
    });
    assertThat(withReports).isEqualTo(without).contains("1", "2", "3");
  }

  @Test
  void alone_fillsEachTargetsLearnedWorkers_fastestFirst_thenQueuesWhereACallIsDoneFirst() throws Exception {
    LoadBalancer lb = lb(t(1), t(2), t(3));
    call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
    call(lb, ticker, t(2), 25, Double.NaN, Double.NaN);
    call(lb, ticker, t(3), 40, Double.NaN, Double.NaN);
    // Each served one call of ours without queueing: free while it has fewer of ours, or as many
    // and no probe above queued. Fastest free target first; then, with none free, least response
    // time's costs: 10 ms x (in flight + 1) until 1 carries 7 calls (80 > 25 x 3 = 75).
    assertThat(held(lb, 12)).containsExactly("1", "1", "2", "2", "3", "3", "1", "1", "1", "1", "1", "2");
  }

  @Test
  void learnsConcurrencyFromCallsThatDidNotQueue_andProbesOneAboveIt() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(2), 30, Double.NaN, Double.NaN);
    concurrent(lb, t(1), 3, 10); // three at once, each 10 ms: 1 serves three without queueing
    assertThat(tracked(lb, t(1)).learnedConcurrency).isEqualTo(3);
    // Three free on 1 and one probe, then 2's one and its probe, then costs: 10 x 5 = 50 < 30 x 3.
    assertThat(held(lb, 7)).containsExactly("1", "1", "1", "1", "2", "2", "1");
  }

  /**
   * A fresh report, whatever it claims, leaves a balancer alone in front of the target reading its
   * learned count, as the hedge's free-worker pick does ({@link FleetLoad#workers}: one test for
   * both): a claim of a million free workers on 1 draws no more calls than its learned three and a
   * probe.
   */
  @Test
  void alone_aFreshReportWhateverItClaims_leavesTheLearnedCountToTell() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(2), 30, Double.NaN, Double.NaN);
    concurrent(lb, t(1), 3, 10);
    call(lb, ticker, t(1), 10, 0.000001, 1); // the lab's liar: rif 1 at utilization 0.000001
    assertThat(held(lb, 7)).containsExactly("1", "1", "1", "1", "2", "2", "1");
  }

  @Test
  void aProbeThatQueued_holdsTheTargetAtItsLearnedConcurrency_forAWindow() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(2), 30, Double.NaN, Double.NaN);
    concurrent(lb, t(1), 2, 10);
    // A probe: two of ours in flight, a third sent; the two take 10 ms, the probe waited for a worker
    // and took 20 (> 1.5 x 10).
    List<Pick> two = List.of(pickOf(lb, t(1)), pickOf(lb, t(1)));
    Pick probe = pickOf(lb, t(1));
    ticker.advanceMillis(10);
    two.forEach(Pick::success);
    ticker.advanceMillis(10);
    probe.success();
    assertThat(tracked(lb, t(1)).learnedConcurrency).isEqualTo(2);
    // For a window of the minimum (16 x 10 ms, at least 50 ms: 160 ms) 1 is free only below 2.
    assertThat(held(lb, 3)).containsExactly("1", "1", "2");
    releaseAll();
    ticker.advanceMillis(160);
    assertThat(held(lb, 3)).containsExactly("1", "1", "1");
  }

  @Test
  void queueingAtOrBelowTheLearnedConcurrency_lowersItByOne() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    concurrent(lb, t(1), 4, 10);
    assertThat(tracked(lb, t(1)).learnedConcurrency).isEqualTo(4);
    List<Pick> three = List.of(pickOf(lb, t(1)), pickOf(lb, t(1)), pickOf(lb, t(1)));
    ticker.advanceMillis(16); // the third of three waited: 16 ms > 1.5 x 10
    three.get(2).success();
    assertThat(tracked(lb, t(1)).learnedConcurrency).isEqualTo(3);
    three.get(0).release();
    three.get(1).release();
  }

  @Test
  void withoutReports_stopsSendingToATargetWhoseLatencyRisesTenfold() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
    call(lb, ticker, t(2), 20, Double.NaN, Double.NaN);
    List<String> seq = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      Pick p = lb.pick();
      String n = name(p.target());
      seq.add(n);
      ticker.advanceMillis(n.equals("1") ? (i < 2 ? 10 : 100) : 20);
      p.success();
    }
    // 1 is the faster free target until its third and fourth calls, each alone on it, take 100 ms:
    // ten times its service time, twice in a row, so they waited behind someone else's calls (one
    // could have been a pause). The balancer stops trusting its own counts and scores by peak-EWMA
    // cost: 100 ms against 20.
    assertThat(seq).containsExactly("1", "1", "1", "1", "2", "2", "2", "2");
  }

  /** Regression: a target that never answered lost to every free one, so it was never measured. */
  @Test
  void aTargetNeverMeasured_getsOneCall_thenWaitsForItsAnswer() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    LoadBalancer lb = Fixtures.builder(ticker, 42).targets(source).strategy(Strategy.leastQueueing()).build();
    call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
    source.add(t(2));
    // 2 is measured by one call while 1 is free; while that call is out, 2 is not chosen again.
    assertThat(held(lb, 4)).containsExactly("2", "1", "1", "1");
    releaseAll();
  }

  @Test
  void aCallThatWaitedAlone_showsOtherClients_andThenItChoosesExactlyAsLeastResponseTime() throws Exception {
    LoadBalancer lq = lb(t(1), t(2), t(3));
    LoadBalancer lrt = Fixtures.builder(ticker, 42).targets(t(1), t(2), t(3)).strategy(Strategy.leastResponseTime())
        .build();
    for (LoadBalancer lb : List.of(lq, lrt)) {
      call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
      call(lb, ticker, t(2), 25, Double.NaN, Double.NaN);
      call(lb, ticker, t(3), 40, Double.NaN, Double.NaN);
    }
    // Our only call on 3 took 70 ms against its 40, twice in a row: another client's calls queued
    // ahead of it. Our own counts no longer tell where a worker is free, for 64 x 40 ms (at least 1 s).
    for (int i = 0; i < 2; i++) {
      call(lq, ticker, t(3), 70, Double.NaN, Double.NaN);
      call(lrt, ticker, t(3), 70, Double.NaN, Double.NaN);
    }
    assertThat(held(lq, 12)).isEqualTo(held(lrt, 12)).containsExactly(
        "1", "1", "2", "1", "1", "1", "2", "1", "1", "3", "2", "1");
    releaseAll();
    ticker.advanceMillis(2_560);
    assertThat(held(lq, 3)).containsExactly("1", "1", "2"); // alone again: its own counts count
  }

  @Test
  void oneCallThatWaitedAlone_isAPauseNotOtherClients_unlessTheNextOneWaitsToo() throws Exception {
    LoadBalancer lq = lb(t(1), t(2), t(3));
    LoadBalancer lrt = Fixtures.builder(ticker, 42).targets(t(1), t(2), t(3)).strategy(Strategy.leastResponseTime())
        .build();
    // 3's only call takes 2.5x its 40 ms (a pause), the next one 40 ms, then 2.5x again: no two in
    // a row, so least queueing goes on trusting its own counts and differs from least response time.
    for (long ms : new long[] {40, 100, 40, 100}) {
      for (LoadBalancer lb : List.of(lq, lrt)) {
        if (ms == 40) {
          call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
          call(lb, ticker, t(2), 25, Double.NaN, Double.NaN);
        }
        call(lb, ticker, t(3), ms, Double.NaN, Double.NaN);
      }
    }
    List<String> own = held(lq, 12);
    List<String> leastResponseTime = held(lrt, 12);
    assertThat(own).isNotEqualTo(leastResponseTime);
    releaseAll();
    // A second slow call right after the first (within 64 x 40 ms): other clients queue there.
    call(lq, ticker, t(3), 100, Double.NaN, Double.NaN);
    call(lrt, ticker, t(3), 100, Double.NaN, Double.NaN);
    assertThat(held(lq, 12)).isEqualTo(held(lrt, 12));
    releaseAll();
  }

  @Test
  void aTargetWhoseLastCallFailed_isHotWhateverItReports() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, 0.25, 2);
    call(lb, ticker, t(2), 50, 0.25, 2);
    Pick p = lb.pick();
    assertThat(name(p.target())).isEqualTo("1");
    ticker.advanceMillis(1);
    p.reportLoad(0, 0); // a fast 503 that says it is idle
    p.failure(new java.io.IOException("HTTP 503"));
    // 2's learned worker and a probe, although 1 is five times faster; then 2 queues (50 ms x 3 =
    // 150) and 1's cost, 10 ms x 4 for its failure = 40, is lower.
    assertThat(held(lb, 3)).containsExactly("2", "2", "1");
    releaseAll();
  }

  @Test
  void aTargetWhoseLastCallFailed_comesAfterOneThatQueues() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
    call(lb, ticker, t(2), 30, Double.NaN, Double.NaN);
    for (int i = 0; i < 3; i++) {
      open.add(pickOf(lb, t(1))); // 1 queues our calls: its learned one, a probe, and one more
    }
    Pick p = lb.pick();
    assertThat(name(p.target())).isEqualTo("2");
    ticker.advanceMillis(1);
    p.failure(new java.io.IOException("HTTP 503")); // a fast failure: 2's cost is x 4, 30 x 4 = 120 ms
    // 1's cost is 10 ms x (calls + 1): 40, 50, 60, all below 120.
    assertThat(held(lb, 3)).containsExactly("1", "1", "1");
    releaseAll();
  }

  /** Regression (lab recovery): a rank below every other target kept a restarted one from ever being tried. */
  @Test
  void aTargetWhoseCallsFailed_isTriedAgainOnceItsCostHasDecayed() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
    call(lb, ticker, t(2), 50, Double.NaN, Double.NaN);
    for (int i = 0; i < 3; i++) {
      Pick p = lb.pick(null, java.util.Set.of(t(2)));
      p.failure(new java.io.IOException("HTTP 503")); // 3 in a row: cost 10 ms x 4^3 = 640 ms
    }
    int back = -1;
    for (int second = 1; second <= 30 && back < 0; second++) {
      ticker.advanceMillis(1000);
      Pick p = lb.pick();
      if (name(p.target()).equals("1")) {
        back = second;
      }
      ticker.advanceMillis(50);
      p.success();
    }
    // 2 is free by its own count (it served one call of ours without queueing), so 1 must first
    // rejoin the free ones: 640 ms decays below its own 10 ms service time after
    // 5 s x ln(64) = 20.8 s without a call: at the twentieth second (1.05 s each).
    assertThat(back).isEqualTo(20);
  }
}
