package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.t;
import static dev.fairway.lb.LoadReportTest.call;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Exact sequences of least queueing, with a seeded random source and a fake ticker. */
class LeastQueueingTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(Strategy.leastQueueing()).build();
  }

  List<String> held(LoadBalancer lb, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(name(lb.pick().target()));
    }
    return out;
  }

  @Test
  void prefersATargetWithAFreeWorker_overAFasterOneThatQueues() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, 1.5, 12); // fast, 12 calls on 8 workers: queueing
    call(lb, ticker, t(2), 50, 0.5, 4); // five times slower, 4 of 8 workers busy
    // 2 while 4 + this balancer's calls since < 8 workers; then both queue, and a call on 1 is done
    // first: 10 ms x (12 + 1) / 8 = 16 ms against 50 ms x (8 + 1) / 8 = 56 ms.
    assertThat(held(lb, 6)).containsExactly("2", "2", "2", "2", "2", "1");
  }

  @Test
  void ignoresAnExpiredReport_andThenChoosesAsLeastResponseTime() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, 1.5, 12);
    call(lb, ticker, t(2), 50, 0.5, 4);
    ticker.advanceMillis(5_000);
    // Peak-EWMA costs: 10 x (in flight + 1) against 50: 1 until it carries five calls.
    assertThat(held(lb, 6)).containsExactly("1", "1", "1", "1", "1", "2");
  }

  @Test
  void withoutReports_choosesExactlyAsLeastResponseTime() throws Exception {
    LoadBalancer lq = lb(t(1), t(2), t(3));
    LoadBalancer lrt = Fixtures.builder(ticker, 42).targets(t(1), t(2), t(3)).strategy(Strategy.leastResponseTime())
        .build();
    for (LoadBalancer lb : List.of(lq, lrt)) {
      call(lb, ticker, t(1), 10, Double.NaN, Double.NaN);
      call(lb, ticker, t(2), 25, Double.NaN, Double.NaN);
      call(lb, ticker, t(3), 40, Double.NaN, Double.NaN);
    }
    // Costs 10, 25 and 40 ms x (in flight + 1); the tie at 40 goes to the seeded random start.
    assertThat(held(lq, 12)).isEqualTo(held(lrt, 12)).containsExactly(
        "1", "1", "2", "1", "1", "3", "1", "2", "1", "1", "2", "1");
  }

  @Test
  void stopsSendingToATargetWhoseLatencyRisesTenfold() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, 0.25, 2);
    call(lb, ticker, t(2), 20, 0.25, 2);
    // Both have free workers: the faster service wins. From the third call on, 1 takes 100 ms.
    List<String> seq = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      Pick p = lb.pick();
      String n = name(p.target());
      seq.add(n);
      ticker.advanceMillis(n.equals("1") ? (i < 2 ? 10 : 100) : 20);
      p.reportLoad(0.25, 2);
      p.success();
    }
    // 1's service time is the lowest latency of the previous and the current window (16 x 10 ms
    // each): the slow calls from 60 ms on end the first window at 250 ms (still 10 ms: the fast ones
    // were in it) and the second at 450 ms, all slow: 100 ms from then on, and 2 takes over.
    assertThat(seq).containsExactly("1", "1", "1", "1", "1", "1", "2", "2", "2", "2", "2", "2");
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
    assertThat(held(lb, 3)).containsExactly("2", "2", "2");
  }

  @Test
  void aTargetWhoseLastCallFailed_comesAfterOneThatQueues() throws Exception {
    LoadBalancer lb = lb(t(1), t(2));
    call(lb, ticker, t(1), 10, 8.0, 64); // every worker busy, a long queue from other clients
    call(lb, ticker, t(2), 30, 0.25, 2);
    Pick p = lb.pick();
    assertThat(name(p.target())).isEqualTo("2");
    ticker.advanceMillis(1);
    p.failure(new java.io.IOException("HTTP 503")); // fast failures: its own cost would look cheap
    assertThat(held(lb, 3)).containsExactly("1", "1", "1");
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
    // 640 ms decays below 2's 50 ms (itself decayed for the second since its last call, to 41 ms)
    // after 5 s x ln(640 / 41) = 13.7 s without a call: at the fourteenth second (1.05 s each).
    assertThat(back).isEqualTo(14);
  }
}
