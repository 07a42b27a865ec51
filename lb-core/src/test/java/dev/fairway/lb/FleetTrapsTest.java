package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The known traps of client-side balancing in a fleet (issue 10, item 4). */
class FleetTrapsTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Strategy strategy, long seed, Target... targets) {
    return Fixtures.builder(ticker, seed).targets(targets).strategy(strategy).build();
  }

  /** Holds {@code n} calls on {@code target}. */
  static void hold(LoadBalancer lb, Target target, int n, Target... others) throws Exception {
    for (int i = 0; i < n; i++) {
      assertThat(lb.pick(null, Set.of(others)).target()).isEqualTo(target);
    }
  }

  @Test
  void powerOfTwoChoices_withTwoTargets_alwaysComparesBoth() throws Exception {
    // A random source that always answers 0: a sampler that may draw the same index twice would
    // compare target 1 with itself and send every call to the loaded target.
    RandomSource zeros = new RandomSource() {
      @Override
      public int nextInt(int bound) {
        return 0;
      }

      @Override
      public double nextDouble() {
        return 0;
      }
    };
    LoadBalancer lb = LoadBalancer.builder("svc").ticker(ticker::read).random(zeros).targets(t(1), t(2))
        .strategy(Strategy.powerOfTwoChoices()).build();
    hold(lb, t(1), 3, t(2));
    assertThat(sequence(lb, 20)).containsOnly("2");
  }

  @Test
  void powerOfTwoChoices_drawsEveryPairOfDistinctTargetsEquallyOften() throws Exception {
    LoadBalancer lb = lb(Strategy.powerOfTwoChoices(), 7, t(1), t(2), t(3));
    hold(lb, t(2), 1, t(1), t(3));
    hold(lb, t(3), 2, t(1), t(2));
    // Loads 0 < 1 < 2: the pair {1,2} or {1,3} gives 1, {2,3} gives 2, no pair gives 3. Unbiased
    // distinct pairs: 1 wins two thirds, 2 one third (of 30,000: 20,000 +- 1%).
    Map<String, Integer> c = counts(sequence(lb, 30_000));
    assertThat(c).doesNotContainKey("3");
    assertThat(c.get("1")).isBetween(19_800, 20_200);
    assertThat(c.get("2")).isBetween(9_800, 10_200);
    assertThat(c.get("1") + c.get("2")).isEqualTo(30_000);
  }

  @Test
  void roundRobinAndWeightedCursors_startAtARandomIndexPerBalancer() throws Exception {
    // Eight balancers built at the same moment with the same list, as a fleet's instances are
    // during a deploy (grpc-java issue 4462): their first picks must not all be the same target.
    for (Strategy strategy : List.of(Strategy.roundRobin(), Strategy.weightedRoundRobin())) {
      List<String> first = new ArrayList<>();
      for (long seed = 1; seed <= 8; seed++) {
        LoadBalancer lb = lb(strategy, seed, t(1), t(2), t(3), t(4));
        first.add(name(lb.pick().target()));
      }
      assertThat(new HashSet<>(first)).as(strategy.name() + " first picks " + first).hasSizeGreaterThanOrEqualTo(3);
    }
  }

  @Test
  void roundRobin_fromItsRandomStart_stillRotatesStrictly() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), 5, t(1), t(2), t(3), t(4));
    List<String> seq = sequence(lb, 8);
    assertThat(seq.subList(4, 8)).isEqualTo(seq.subList(0, 4));
    assertThat(new HashSet<>(seq.subList(0, 4))).containsExactlyInAnyOrder("1", "2", "3", "4");
  }

  @Test
  void affinityHit_doesNotAdvanceTheKeylessStrategy() throws Exception {
    for (Strategy strategy : List.of(Strategy.keyAffinity(), Strategy.consistentHash())) {
      LoadBalancer plain = lb(strategy, 11, t(1), t(2), t(3), t(4));
      LoadBalancer mixed = lb(strategy, 11, t(1), t(2), t(3), t(4)); // a description: each balancer has its own state
      List<String> keyless = new ArrayList<>();
      List<String> interleaved = new ArrayList<>();
      for (int i = 0; i < 40; i++) {
        Pick p = plain.pick(null);
        keyless.add(name(p.target()));
        p.release();
        Pick hit = mixed.pick("user-" + (i % 3)); // affinity hits (after the first three placements)
        hit.success();
        Pick q = mixed.pick(null);
        interleaved.add(name(q.target()));
        q.release();
      }
      assertThat(interleaved).as(strategy.name()).isEqualTo(keyless);
    }
  }
}
