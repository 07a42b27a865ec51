package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class SlowStartTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  @Test
  void aJoiningTargetsShareGrowsFromTenPercentToFullOverTheWindow() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.weightedRoundRobin())
        .slowStart(Duration.ofSeconds(10)).build();
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY); // the first list does not warm up
    source.add(t(3));
    assertThat(state(lb, t(3))).isEqualTo(TargetState.WARMING);
    // Weights 100:100:10 -> cycle of 21 with one slot for the newcomer.
    assertThat(counts(sequence(lb, 21 * 10)).get("3")).isEqualTo(10);
    ticker.advanceMillis(5_000); // half way: 10% + 90% x 5/10 = 55
    assertThat(counts(sequence(lb, 51 * 10)).get("3")).isEqualTo(110); // 20:20:11 per 51
    ticker.advanceMillis(2_500); // step 7: 10 + 63 = 73
    assertThat(counts(sequence(lb, 273 * 2)).get("3")).isEqualTo(146);
    ticker.advanceMillis(2_500);
    assertThat(counts(sequence(lb, 300)).get("3")).isEqualTo(100);
    assertThat(state(lb, t(3))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void aTargetBackFromEjectionWarmsUpToo_andLoadAwareStrategiesPenaliseIt() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(Strategy.leastConnections())
        .slowStart(Duration.ofSeconds(10)).build();
    Pick p = lb.pick(null, Set.of(t(2)));
    p.failure(new ConnectException("refused"));
    ticker.advanceMillis(10_000);
    lb.pick(null, Set.of(t(1))).success(); // the trial call restores it
    assertThat(state(lb, t(1))).isEqualTo(TargetState.WARMING);
    // Held picks: at 10% weight target 1 takes one call for every ten on target 2.
    List<String> held = new java.util.ArrayList<>();
    for (int i = 0; i < 22; i++) {
      held.add(Fixtures.name(lb.pick().target()));
    }
    assertThat(counts(held)).containsEntry("1", 2).containsEntry("2", 20);
  }
}
