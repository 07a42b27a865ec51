package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

/** The trust model ({@link ReportJudge}) step by step, exact, on values of a fake ticker. */
class ReportJudgeTest {
  static final long NOW = 1_000_000_000L;
  static final long MS = 1_000_000L;

  final ReportJudge judge = new ReportJudge();

  static TrackedTarget target(int n) throws Exception {
    Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(n)).strategy(Strategy.leastConnections()).build();
    return LeastQueueingTest.tracked(lb, t(n));
  }

  /**
   * One answer of 100 ms is 1 x 100 ms / 5 s of our calls there, divided by the 1/16 of the window a
   * fresh count is taken to have reached: 0.32. A report of 10 calls makes the ratio 31.25, the first
   * sets the scale, and the target's trust moves a quarter of the way to full agreement. A target
   * claiming none (counted as our 1) has a tenth of that ratio: it pulls the scale by 1/16 x half, and
   * its trust moves a quarter of the way to about 0.1 only.
   */
  @Test
  void aReportAgreeingWithTheScale_gainsTrust_oneThatDoesNot_fades() throws Exception {
    TrackedTarget honest = target(1);
    TrackedTarget liar = target(2);
    assertThat(judge.judge(honest, 10, 1, NOW, 100 * MS)).isEqualTo(ReportJudge.Verdict.AGREES);
    assertThat(honest.ownCalls(NOW)).isCloseTo(0.32, within(1e-12));
    assertThat(judge.scale()).isCloseTo(31.25, within(1e-9));
    assertThat(honest.trust).isEqualTo(0.25);

    assertThat(judge.judge(liar, 0, 1, NOW, 100 * MS)).isEqualTo(ReportJudge.Verdict.DISAGREES);
    double scale = 31.25 + (1.0 / 16) * 0.5 * (3.125 - 31.25);
    assertThat(judge.scale()).isCloseTo(scale, within(1e-9));
    assertThat(liar.trust).isCloseTo(0.25 * (3.125 / scale), within(1e-12));
  }

  @Test
  void aReportWithoutACount_isUnjudged_andChangesNoTrust() throws Exception {
    TrackedTarget t = target(1);
    assertThat(judge.judge(t, Double.NaN, 1, NOW, 100 * MS)).isEqualTo(ReportJudge.Verdict.UNJUDGED);
    assertThat(judge.judge(t, Double.POSITIVE_INFINITY, 1, NOW, 100 * MS)).isEqualTo(ReportJudge.Verdict.UNJUDGED);
    assertThat(t.trust).isZero();
    assertThat(judge.scale()).isZero();
  }

  /**
   * A distrusted target is counted by our own traffic on the fleet's scale (here 28.8 x 0.32 = 9.2
   * calls, rounded to 9) rather than at our own 0 calls there; once no answer came for a minute that
   * traffic has decayed away and it is counted at our own calls again, so it gets calls: never
   * frozen out.
   */
  @Test
  void aDistrustedTarget_isCountedByOurTrafficOnTheFleetsScale_untilThatTrafficDecays() throws Exception {
    TrackedTarget honest = target(1);
    TrackedTarget liar = target(2);
    judge.judge(honest, 10, 1, NOW, 100 * MS);
    judge.judge(liar, 0, 1, NOW, 100 * MS);
    double scale = judge.scale();
    assertThat(FleetLoad.load(liar, NOW, scale)).isEqualTo(Math.rint((scale - 1) * 0.32)).isEqualTo(9.0);
    assertThat(FleetLoad.load(liar, NOW + 60_000 * MS, scale)).isZero();
    assertThat(FleetLoad.load(target(3), NOW, scale)).isZero(); // never judged: our own count
  }

  /** A lone client's scale is about 1: its own calls are the fleet, and its count is exact. */
  @Test
  void aLoneClient_countsItsOwnCalls() throws Exception {
    TrackedTarget t = target(1);
    t.acquire();
    t.acquire();
    judge.judge(t, 1, 1, NOW, 312_500_000L); // our 1 call reported, and 1 x 312.5 ms / (5 s / 16) of ours
    assertThat(judge.scale()).isCloseTo(1.0, within(1e-9));
    assertThat(FleetLoad.load(t, NOW, judge.scale())).isEqualTo(2.0);
  }
}
