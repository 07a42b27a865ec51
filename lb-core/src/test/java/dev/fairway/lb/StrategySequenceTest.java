package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StrategySequenceTest {
  static final Target A = Target.of("10.0.0.1", 80);
  static final Target B = Target.of("10.0.0.2", 80);
  static final Target C = Target.of("10.0.0.3", 80);

  static List<String> picks(LoadBalancer lb, int n) throws Exception {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Pick p = lb.pick();
      out.add(p.target().host().substring(p.target().host().length() - 1));
      p.success();
    }
    return out;
  }

  @Test
  void roundRobin_strictRotation() throws Exception {
    LoadBalancer lb = LoadBalancer.builder("s").targets(A, B, C).strategy(Strategy.roundRobin()).build();
    assertThat(picks(lb, 7)).containsExactly("1", "2", "3", "1", "2", "3", "1");
  }

  @Test
  void weightedRoundRobin_isSmoothLikeNginx() throws Exception {
    LoadBalancer lb = LoadBalancer.builder("s")
        .targets(A.withWeight(5), B.withWeight(1), C.withWeight(1))
        .strategy(Strategy.weightedRoundRobin()).build();
    assertThat(picks(lb, 7)).containsExactly("1", "1", "2", "1", "3", "1", "1");
  }

  @Test
  void weightedRoundRobin_exactProportions() throws Exception {
    LoadBalancer lb = LoadBalancer.builder("s")
        .targets(A.withWeight(5), B.withWeight(3), C.withWeight(2))
        .strategy(Strategy.weightedRoundRobin()).build();
    Map<String, Integer> counts = new HashMap<>();
    for (String s : picks(lb, 1000)) counts.merge(s, 1, Integer::sum);
    assertThat(counts).containsEntry("1", 500).containsEntry("2", 300).containsEntry("3", 200);
  }
}
