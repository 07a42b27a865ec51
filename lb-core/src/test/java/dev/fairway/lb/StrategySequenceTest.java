package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Exact sequences of every strategy, with a seeded random source and a fake ticker. */
class StrategySequenceTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(Strategy strategy, Target... targets) {
    return Fixtures.builder(ticker, 42).targets(targets).strategy(strategy).build();
  }

  @Test
  void roundRobin_strictRotation() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1), t(2), t(3));
    assertThat(sequence(lb, 7)).containsExactly("3", "1", "2", "3", "1", "2", "3"); // from a random start
  }

  @Test
  void roundRobin_skipsExcludedTargetAndKeepsRotating() throws Exception {
    LoadBalancer lb = lb(Strategy.roundRobin(), t(1), t(2), t(3));
    assertThat(name(lb.pick(null, Set.of(t(3))).target())).isEqualTo("1"); // the cursor was on 3
    assertThat(name(lb.pick(null, Set.of(t(1))).target())).isEqualTo("2");
    assertThat(name(lb.pick(null, Set.of()).target())).isEqualTo("2");
  }

  @Test
  void weightedRoundRobin_isSmoothLikeNginx() throws Exception {
    LoadBalancer lb = lb(Strategy.weightedRoundRobin(), t(1).withWeight(5), t(2).withWeight(1), t(3).withWeight(1));
    // nginx's cycle 1 1 2 1 3 1 1, read from a random slot (here the third)
    assertThat(sequence(lb, 7)).containsExactly("2", "1", "3", "1", "1", "1", "1");
  }

  @Test
  void weightedRoundRobin_neverRunsOneTargetMoreThanFourTimesAcrossCycles() throws Exception {
    LoadBalancer lb = lb(Strategy.weightedRoundRobin(), t(1).withWeight(5), t(2).withWeight(1), t(3).withWeight(1));
    List<String> seq = sequence(lb, 7 * 100);
    int longest = 0;
    int run = 0;
    for (int i = 0; i < seq.size(); i++) {
      run = i > 0 && seq.get(i).equals(seq.get(i - 1)) ? run + 1 : 1;
      longest = Math.max(longest, run);
    }
    assertThat(longest).isEqualTo(4);
  }

  @Test
  void weightedRoundRobin_exactProportionsOver1000Picks() throws Exception {
    LoadBalancer lb = lb(Strategy.weightedRoundRobin(), t(1).withWeight(5), t(2).withWeight(3), t(3).withWeight(2));
    assertThat(counts(sequence(lb, 1000))).containsEntry("1", 500).containsEntry("2", 300).containsEntry("3", 200);
  }

  @Test
  void weightedRoundRobin_boundedScheduleForHugeWeights() {
    long[] weights = new long[1000];
    for (int i = 0; i < weights.length; i++) {
      weights[i] = 100L * (1_000_000 - i * 997);
    }
    int[] schedule = WeightedRoundRobinStrategy.schedule(weights);
    assertThat(schedule.length).isLessThanOrEqualTo(WeightedRoundRobinStrategy.MAX_CYCLE + 1000);
    int[] seen = new int[1000];
    for (int i : schedule) {
      seen[i]++;
    }
    assertThat(java.util.Arrays.stream(seen).min().orElseThrow()).isGreaterThanOrEqualTo(1);
  }

  @Test
  void weightedRoundRobin_edfLayoutKeepsExactProportions() {
    // Large enough that nginx's O(cycle x n) build is replaced by the EDF layout.
    long[] weights = new long[3000];
    for (int i = 0; i < weights.length; i++) {
      weights[i] = i % 3 == 0 ? 7 : 3;
    }
    int[] schedule = WeightedRoundRobinStrategy.schedule(weights);
    assertThat((long) schedule.length * weights.length).isGreaterThan(WeightedRoundRobinStrategy.MAX_NGINX_STEPS);
    int[] seen = new int[weights.length];
    for (int i : schedule) {
      seen[i]++;
    }
    for (int i = 0; i < weights.length; i++) {
      assertThat(seen[i]).isEqualTo((int) weights[i]);
    }
  }

  @Test
  void random_isWeighted() throws Exception {
    LoadBalancer lb = lb(Strategy.random(), t(1).withWeight(3), t(2).withWeight(1));
    Map<String, Integer> c = counts(sequence(lb, 40_000));
    assertThat(c.get("1")).isBetween(29_400, 30_600);
  }

  @Test
  void leastConnections_choosesTheTargetWithFewestHeldPicks() throws Exception {
    LoadBalancer lb = lb(Strategy.leastConnections(), t(1), t(2), t(3));
    List<Pick> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(lb.pick());
    }
    assertThat(held).extracting(p -> name(p.target())).containsExactlyInAnyOrder("1", "2", "3");
    Pick onTwo = held.stream().filter(p -> name(p.target()).equals("2")).findFirst().orElseThrow();
    onTwo.success();
    assertThat(name(lb.pick().target())).isEqualTo("2");
  }

  @Test
  void leastConnections_countsLoadPerWeight() throws Exception {
    LoadBalancer lb = lb(Strategy.leastConnections(), t(1).withWeight(3), t(2).withWeight(1));
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      held.add(name(lb.pick().target())); // never completed: load accumulates
    }
    assertThat(counts(held)).containsEntry("1", 6).containsEntry("2", 2);
  }

  @Test
  void leastConnections_tiesDoNotFavourTheFirstTarget() throws Exception {
    LoadBalancer lb = lb(Strategy.leastConnections(), t(1), t(2), t(3), t(4));
    Map<String, Integer> c = counts(sequence(lb, 4000));
    assertThat(c.values()).allMatch(n -> n > 800);
  }

  @Test
  void powerOfTwoChoices_neverPicksTheLoadedTargetOverAnIdleOne() throws Exception {
    LoadBalancer lb = lb(Strategy.powerOfTwoChoices(), t(1), t(2), t(3), t(4));
    for (int i = 0; i < 3; i++) {
      lb.pick(null, Set.of(t(2), t(3), t(4))); // held: target 1 carries 3 calls
    }
    Map<String, Integer> c = counts(sequence(lb, 300));
    assertThat(c).doesNotContainKey("1");
    assertThat(c.values()).allMatch(n -> n > 60);
  }

  @Test
  void keyAffinity_sameKeySameTarget_andKeysSpread() throws Exception {
    LoadBalancer lb = lb(Strategy.keyAffinity(), t(1), t(2), t(3), t(4));
    Map<String, String> first = new HashMap<>();
    for (int k = 0; k < 1000; k++) {
      Pick p = lb.pick("user-" + k);
      first.put("user-" + k, name(p.target()));
      p.success();
    }
    for (int k = 0; k < 1000; k++) {
      Pick p = lb.pick("user-" + k);
      assertThat(name(p.target())).isEqualTo(first.get("user-" + k));
      p.success();
    }
    assertThat(counts(new ArrayList<>(first.values())).values()).allMatch(n -> n > 180);
  }

  @Test
  void keyAffinity_keysKeepTheirTargetWhenTheListGrows() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2), t(3)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.keyAffinity()).build();
    Map<String, Target> before = new HashMap<>();
    for (int k = 0; k < 500; k++) {
      Pick p = lb.pick("k" + k);
      before.put("k" + k, p.target());
      p.success();
    }
    source.add(t(4));
    source.add(t(5));
    for (int k = 0; k < 500; k++) {
      Pick p = lb.pick("k" + k);
      assertThat(p.target()).isEqualTo(before.get("k" + k));
      p.success();
    }
  }

  @Test
  void keyAffinity_movesTheKeyAfterAFailureAndRemembersTheNewTarget() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2), t(3), t(4))
        .strategy(Strategy.keyAffinity()).passiveHealth(PassiveHealth.disabled()).build();
    Pick p = lb.pick("alice");
    Target original = p.target();
    p.failure(new java.io.IOException("boom"));
    Pick moved = lb.pick("alice");
    assertThat(moved.target()).isNotEqualTo(original);
    moved.success();
    for (int i = 0; i < 20; i++) {
      Pick again = lb.pick("alice");
      assertThat(again.target()).isEqualTo(moved.target());
      again.success();
    }
  }

  @Test
  void keyAffinity_anExcludedHomeServesThatPickElsewhere_butTheKeyStaysHome() throws Exception {
    // Issue 32 "Why" 3: a hedge's pick excludes the home; when the hedge won, the key had moved for good.
    LoadBalancer lb = lb(Strategy.keyAffinity(), t(1), t(2), t(3));
    Pick p = lb.pick("bob");
    Target home = p.target();
    p.success();
    Pick hedge = lb.pick("bob", Set.of(home));
    assertThat(hedge.target()).isNotEqualTo(home);
    hedge.success();
    for (int i = 0; i < 3; i++) {
      Pick again = lb.pick("bob");
      assertThat(again.target()).isEqualTo(home);
      again.success();
    }
  }

  @Test
  void keyAffinity_anExcludedPickOfANewKey_placesIt() throws Exception {
    LoadBalancer lb = lb(Strategy.keyAffinity(), t(1), t(2), t(3));
    Target unexcluded = lb.pick("carol").target();
    lb = lb(Strategy.keyAffinity(), t(1), t(2), t(3)); // a fresh table
    Pick first = lb.pick("carol", Set.of(unexcluded)); // nothing remembered yet: this is its placement
    first.success();
    assertThat(first.target()).isNotEqualTo(unexcluded);
    assertThat(lb.pick("carol").target()).isEqualTo(first.target());
  }

  @Test
  void keyAffinity_aHomeThatFailed_afterAnExcludedPick_stillMovesTheKey() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2), t(3))
        .strategy(Strategy.keyAffinity()).passiveHealth(PassiveHealth.disabled()).build();
    Pick p = lb.pick("dave");
    Target home = p.target();
    p.failure(new java.io.IOException("reset"));
    Pick retry = lb.pick("dave", Set.of(home));
    retry.success();
    assertThat(retry.target()).isNotEqualTo(home);
    assertThat(lb.pick("dave").target()).isEqualTo(retry.target());
  }

  @Test
  void keyAffinity_tableIsBoundedAndEvictsTheOldestKey() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(new KeyAffinityStrategy(3)).build();
    for (String k : List.of("a", "b", "c", "d")) {
      lb.pick(k).success();
    }
    AffinityTable table = ((KeyAffinityStrategy.KeyAffinitySelector) currentSelector(lb)).table();
    assertThat(table.size()).isEqualTo(3);
    assertThat(table.get("a")).isNull();
    assertThat(table.get("d")).isNotNull();
  }

  @Test
  void keyAffinity_nullKeyFallsBackToPowerOfTwoChoices() throws Exception {
    LoadBalancer lb = lb(Strategy.keyAffinity(), t(1), t(2));
    assertThat(counts(sequence(lb, 200)).keySet()).containsExactlyInAnyOrder("1", "2");
  }

  @Test
  void consistentHash_removingOneOfTenMovesOnlyItsKeys() throws Exception {
    MutableTargetSource source = new MutableTargetSource(Fixtures.targets(10));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.consistentHash()).build();
    int keys = 20_000;
    String[] before = new String[keys];
    for (int k = 0; k < keys; k++) {
      Pick p = lb.pick("key-" + k);
      before[k] = name(p.target());
      p.success();
    }
    source.remove(t(4));
    int moved = 0;
    for (int k = 0; k < keys; k++) {
      Pick p = lb.pick("key-" + k);
      String now = name(p.target());
      p.success();
      if (before[k].equals("4")) {
        assertThat(now).isNotEqualTo("4");
        moved++;
      } else {
        assertThat(now).as("key-%d was on %s", k, before[k]).isEqualTo(before[k]);
      }
    }
    assertThat(moved).isBetween(keys * 8 / 100, keys * 12 / 100);
  }

  @Test
  void consistentHash_tenEqualTargetsEachGetTenPercentWithinThreePoints() throws Exception {
    LoadBalancer lb = lb(Strategy.consistentHash(), Fixtures.targets(10).toArray(new Target[0]));
    Map<String, Integer> c = new HashMap<>();
    for (int k = 0; k < 100_000; k++) {
      Pick p = lb.pick("user:" + k);
      c.merge(name(p.target()), 1, Integer::sum);
      p.success();
    }
    assertThat(c).hasSize(10);
    assertThat(c.values()).allMatch(n -> n >= 7_000 && n <= 13_000);
  }

  @Test
  void consistentHash_excludedTargetIsSkippedToTheNextOnTheRing() throws Exception {
    LoadBalancer lb = lb(Strategy.consistentHash(), Fixtures.targets(5).toArray(new Target[0]));
    Target home = lb.pick("k").target();
    Target next = lb.pick("k", Set.of(home)).target();
    assertThat(next).isNotEqualTo(home);
    assertThat(lb.pick("k").target()).isEqualTo(home);
    assertThat(lb.pick("k", Set.of(home)).target()).isEqualTo(next);
  }

  @Test
  void leastResponseTime_spreadsLoadOnceTheFastTargetIsLoaded() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1), t(2));
    teachLatency(lb, t(1), 10);
    teachLatency(lb, t(2), 45);
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      held.add(name(lb.pick().target()));
    }
    // fast costs 10, 20, 30, 40 (in-flight + 1), then 50 > 45: the slow one; then fast (50 < 90).
    assertThat(held).containsExactly("1", "1", "1", "1", "2", "1");
  }

  @Test
  void leastResponseTime_doesNotHerdOnTheFastestUnderSustainedLoad() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1), t(2), t(3), t(4));
    int[] latencyMs = {50, 150, 300, 500};
    for (int i = 0; i < 4; i++) {
      teachLatency(lb, t(i + 1), latencyMs[i]);
    }
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      held.add(name(lb.pick().target())); // 100 users' calls in flight at once
    }
    Map<String, Integer> c = counts(held);
    assertThat(c).containsOnlyKeys("1", "2", "3", "4");
    assertThat(c.get("1")).isLessThan(70);
  }

  @Test
  void leastResponseTime_aSlowTargetThatRecoveredIsProbedAgainAndWinsBack() throws Exception {
    LoadBalancer lb = lb(Strategy.leastResponseTime(), t(1), t(2));
    teachLatency(lb, t(1), 10);
    teachLatency(lb, t(2), 1000);
    // One call per simulated second; target 2 has recovered and now answers in 5 ms.
    int firstBackOnTwo = -1;
    List<String> afterwards = new ArrayList<>();
    for (int second = 1; second <= 120; second++) {
      ticker.advanceMillis(1000);
      Pick p = lb.pick();
      String n = name(p.target());
      ticker.advanceMillis(n.equals("1") ? 10 : 5);
      p.success();
      if (firstBackOnTwo < 0 && n.equals("2")) {
        firstBackOnTwo = second;
      } else if (firstBackOnTwo > 0) {
        afterwards.add(n);
      }
    }
    // 1000 ms decays below 10 ms after tau x ln(100) = 5 s x 4.6 = 23 s without samples.
    assertThat(firstBackOnTwo).isBetween(20, 30);
    // From then on 2 is the faster one; 1 is only re-probed when its own average has decayed.
    assertThat(counts(afterwards).get("2")).isGreaterThan(afterwards.size() * 2 / 3);
  }

  @Test
  void leastResponseTime_newTargetGetsOneProbeThenWaitsForItsResult() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    LoadBalancer lb = Fixtures.builder(ticker, 3).targets(source).strategy(Strategy.leastResponseTime()).build();
    teachLatency(lb, t(1), 10);
    source.add(t(2));
    assertThat(name(lb.pick().target())).isEqualTo("2"); // unmeasured and idle: probe it
    assertThat(name(lb.pick().target())).isEqualTo("1"); // probe outstanding: penalised
  }

  @Test
  void concurrencyLimited_softThenHardThenQueueThenTimeout() throws Exception {
    // The wait's deadline is read from the balancer's ticker: this test waits in real time.
    LoadBalancer lb = LoadBalancer.builder("svc").random(RandomSource.seeded(5))
        .targets(t(1).withZone("a"), t(2).withZone("b"))
        .localZone("a")
        .strategy(Strategy.concurrencyLimited(2, 3, Duration.ofMillis(100)))
        .build();
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      held.add(name(lb.pick().target()));
    }
    // local zone up to soft (2), then the other zone up to soft, then least loaded under hard (3).
    assertThat(held).containsExactly("1", "1", "2", "2", "1", "2");
    long start = System.nanoTime();
    assertThatThrownBy(lb::pick)
        .isInstanceOf(NoTargetAvailableException.class)
        .hasMessageContaining("svc")
        .hasMessageContaining("all 2 targets are at their hard limit of 3 calls in flight");
    assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(90));
  }

  @Test
  void concurrencyLimited_waiterGetsTheSlotThatIsReleased() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 5).targets(t(1))
        .strategy(Strategy.concurrencyLimited(1, 1, Duration.ofSeconds(5))).build();
    Pick holder = lb.pick();
    CompletableFuture<Pick> waiter = CompletableFuture.supplyAsync(() -> {
      try {
        return lb.pick();
      } catch (NoTargetAvailableException e) {
        throw new RuntimeException(e);
      }
    });
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (lb.waitingForSlot() == 0 && System.nanoTime() < deadline) {
      Thread.sleep(5);
    }
    assertThat(lb.waitingForSlot()).as("the second caller queued").isEqualTo(1);
    assertThat(waiter).isNotDone();
    holder.success();
    Pick got = waiter.get(5, TimeUnit.SECONDS);
    assertThat(lb.waitingForSlot()).isZero();
    assertThat(got.target()).isEqualTo(t(1));
    assertThat(Fixtures.inFlight(lb, t(1))).isEqualTo(1);
  }

  @Test
  void concurrencyLimited_manyTargets_prefersTheLocalZoneAndHoldsTheHardLimit() throws Exception {
    List<Target> many = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      many.add(Target.of("10.3.0." + i, 80).withZone(i < 20 ? "near" : "far"));
    }
    LoadBalancer lb = Fixtures.builder(ticker, 9).targets(many.toArray(new Target[0])).localZone("near")
        .strategy(Strategy.concurrencyLimited(1, 2, Duration.ZERO)).build();
    List<Pick> held = new ArrayList<>();
    for (int i = 0; i < 400; i++) {
      held.add(lb.pick());
    }
    assertThat(held.subList(0, 10)).allMatch(p -> p.target().zone().equals("near"));
    assertThat(lb.status()).allMatch(s -> s.inFlight() == 2);
    assertThatThrownBy(lb::pick).hasMessageContaining("all 200 targets are at their hard limit of 2");
  }

  @Test
  void concurrencyLimited_zeroWaitFailsAtOnce() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 5).targets(t(1))
        .strategy(Strategy.concurrencyLimited(1, 1, Duration.ZERO)).build();
    lb.pick();
    assertThatThrownBy(lb::pick).isInstanceOf(NoTargetAvailableException.class).hasMessageContaining("hard limit");
  }

  @Test
  void everyStrategy_failsWithAClearMessageWhenEverythingIsExcluded() {
    for (String name : StrategyNames.ALL) {
      LoadBalancer lb = lb(Strategy.named(name), t(1), t(2));
      assertThatThrownBy(() -> lb.pick("k", Set.of(t(1), t(2))))
          .as(name)
          .isInstanceOf(NoTargetAvailableException.class)
          .hasMessage("no target available for service 'svc': all 2 available targets are excluded");
    }
  }

  /** Records one call of {@code ms} on {@code target} by excluding the others. */
  private void teachLatency(LoadBalancer lb, Target target, long ms) throws Exception {
    Set<Target> exclude = new java.util.HashSet<>();
    for (TargetStatus s : lb.status()) {
      if (!s.target().equals(target)) {
        exclude.add(s.target());
      }
    }
    Pick p = lb.pick(null, exclude);
    assertThat(p.target()).isEqualTo(target);
    ticker.advanceMillis(ms);
    p.success();
  }

  private static Selector currentSelector(LoadBalancer lb) {
    return lb.published().selector;
  }
}
