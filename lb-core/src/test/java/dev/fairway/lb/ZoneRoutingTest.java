package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.name;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Zone-aware routing ({@link LoadBalancer.Builder#localZone}): targets 1 and 2 in zone "a" (the
 * caller's), 3 and 4 in zone "b"; a seeded random source and a fake ticker, so counts are exact.
 */
class ZoneRoutingTest {
  private final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  static Target a(int n) {
    return t(n).withZone("a");
  }

  static Target b(int n) {
    return t(n).withZone("b");
  }

  /** Both zones whole; {@code sickLocal} of zone a's targets reported unhealthy by the source. */
  static List<Target> fleet(int sickLocal) {
    return List.of(a(1).withHealthy(sickLocal < 1), a(2).withHealthy(sickLocal < 2), b(3), b(4));
  }

  LoadBalancer zoned(Strategy strategy, MutableTargetSource source) {
    return Fixtures.builder(ticker, 42).targets(source).strategy(strategy).localZone("a").build();
  }

  static double localShare(LoadBalancer lb) {
    Selector selector = lb.published().selector;
    return selector == null ? 1.0 : selector.localShare();
  }

  static ZoneSplit zoneSplit(LoadBalancer lb) {
    return lb.published().selector instanceof ZoneRouting.ZoneSelector z ? z.split : null;
  }

  static Map<String, Integer> keyedCounts(LoadBalancer lb, int keys) throws NoTargetAvailableException {
    Map<String, Integer> m = new HashMap<>();
    for (int i = 0; i < keys; i++) {
      Pick p = lb.pick("key-" + i);
      m.merge(name(p.target()), 1, Integer::sum);
      p.success();
    }
    return m;
  }

  // ------------------------------------------------------------------ off, and no split to make

  @Test
  void noLocalZone_theSelectorIsTheStrategysOwn() {
    LoadBalancer lb = Fixtures.builder(ticker, 42).targets(a(1), b(3)).strategy(Strategy.roundRobin()).build();
    assertThat(zoneSplit(lb)).isNull();
    assertThat(lb.published().selector).isInstanceOf(RoundRobinStrategy.RoundRobinSelector.class);
  }

  @Test
  void everyTargetInOneZone_noSplit_theStrategyRunsOverAll() throws Exception {
    LoadBalancer lb = zoned(Strategy.roundRobin(), new MutableTargetSource(List.of(a(1), a(2))));
    assertThat(zoneSplit(lb)).isNull();
    assertThat(lb.published().selector).isInstanceOf(RoundRobinStrategy.RoundRobinSelector.class);
    assertThat(counts(sequence(lb, 4))).containsEntry("1", 2).containsEntry("2", 2);
  }

  @Test
  void localZoneWhole_everyCallStaysLocal_forEveryStrategy() throws Exception {
    for (String name : Strategy.names()) {
      LoadBalancer lb = zoned(Strategy.named(name), new MutableTargetSource(fleet(0)));
      List<String> seq = sequence(lb, 200);
      assertThat(counts(seq)).as(name).containsOnlyKeys("1", "2");
      lb.close();
    }
  }

  // ------------------------------------------------------------------ the rule

  @Test
  void targetShare_isLocalHealthOverOverallHealth_cappedAtOne() {
    // zone a: 2 of 4 targets, one lost: (1/2) / (3/4)
    assertThat(ZoneSplit.targetShare(100, 200, 300, 400, true)).isCloseTo(2.0 / 3, within(1e-12));
    assertThat(ZoneSplit.targetShare(200, 200, 300, 400, true)).isEqualTo(1.0); // b lost one: a keeps all
    assertThat(ZoneSplit.targetShare(0, 200, 200, 400, true)).isEqualTo(0.0);
    assertThat(ZoneSplit.targetShare(100, 200, 100, 400, false)).isEqualTo(1.0); // nowhere to spill to
    // weights count: a = 1 target of weight 3 (of 3) healthy, fleet 3 of 6 healthy -> stays local
    assertThat(ZoneSplit.targetShare(300, 300, 300, 600, true)).isEqualTo(1.0);
  }

  // ------------------------------------------------------------------ spill-over, per strategy family
  // Zone a loses one of its two targets: it keeps (1/2) / (3/4) = 2/3 of the calls, zone b takes 1/3.

  @Test
  void spill_rotations_keepTwoThirdsLocal_andSplitTheRestOverZoneB() throws Exception {
    for (Strategy s : List.of(Strategy.roundRobin(), Strategy.weightedRoundRobin())) {
      LoadBalancer lb = zoned(s, new MutableTargetSource(fleet(1)));
      assertThat(localShare(lb)).isCloseTo(2.0 / 3, within(1e-12));
      assertThat(counts(sequence(lb, 3000))).as(s.name())
          .containsOnlyKeys("2", "3", "4").containsEntry("2", 2009).containsEntry("3", 495).containsEntry("4", 496);
    }
  }

  @Test
  void spill_randomAndPowerOfTwo_keepTwoThirdsLocal() throws Exception {
    LoadBalancer random = zoned(Strategy.random(), new MutableTargetSource(fleet(1)));
    assertThat(counts(sequence(random, 3000)))
        .containsOnlyKeys("2", "3", "4").containsEntry("2", 2013).containsEntry("3", 521).containsEntry("4", 466);
    LoadBalancer p2c = zoned(Strategy.powerOfTwoChoices(), new MutableTargetSource(fleet(1)));
    assertThat(counts(sequence(p2c, 3000)))
        .containsOnlyKeys("2", "3", "4").containsEntry("2", 2046).containsEntry("3", 485).containsEntry("4", 469);
  }

  @Test
  void spill_loadAware_keepTwoThirdsLocal() throws Exception {
    for (Strategy s : List.of(Strategy.leastConnections(), Strategy.leastResponseTime(), Strategy.leastQueueing())) {
      LoadBalancer lb = zoned(s, new MutableTargetSource(fleet(1)));
      assertThat(counts(sequence(lb, 3000))).as(s.name())
          .containsOnlyKeys("2", "3", "4").containsEntry("2", 1983).containsEntry("3", 520).containsEntry("4", 497);
    }
  }

  @Test
  void spill_hashStrategies_keepTheKeysBelowTheShareLocal_andEveryKeyOnOneTarget() throws Exception {
    int local = 0;
    for (int i = 0; i < 3000; i++) {
      if (ZoneRouting.keyFraction("key-" + i) < 2.0 / 3) {
        local++;
      }
    }
    assertThat(local).isEqualTo(1958);
    LoadBalancer affinity = zoned(Strategy.keyAffinity(), new MutableTargetSource(fleet(1)));
    Map<String, Integer> first = keyedCounts(affinity, 3000);
    assertThat(first).containsOnlyKeys("2", "3", "4").containsEntry("2", 1958).containsEntry("3", 511)
        .containsEntry("4", 531);
    assertThat(keyedCounts(affinity, 3000)).isEqualTo(first); // sticky: the same keys, the same targets
    LoadBalancer ring = zoned(Strategy.consistentHash(), new MutableTargetSource(fleet(1)));
    Map<String, Integer> onRing = keyedCounts(ring, 3000);
    assertThat(onRing).containsOnlyKeys("2", "3", "4").containsEntry("2", 1958).containsEntry("3", 508)
        .containsEntry("4", 534);
    assertThat(keyedCounts(ring, 3000)).isEqualTo(onRing);
  }

  @Test
  void hashStrategies_localZoneWhole_keysLiveOnTheLocalRingOnly() throws Exception {
    MutableTargetSource source = new MutableTargetSource(fleet(0));
    LoadBalancer ring = zoned(Strategy.consistentHash(), source);
    Map<String, String> home = new HashMap<>();
    for (int i = 0; i < 500; i++) {
      Pick p = ring.pick("key-" + i);
      home.put("key-" + i, name(p.target()));
      p.success();
    }
    assertThat(new java.util.HashSet<>(home.values())).containsExactlyInAnyOrder("1", "2");
    // Zone b changing moves no key: the local ring does not contain it.
    source.set(List.of(a(1), a(2), b(3)));
    for (int i = 0; i < 500; i++) {
      Pick p = ring.pick("key-" + i);
      assertThat(name(p.target())).isEqualTo(home.get("key-" + i));
      p.success();
    }
  }

  @Test
  void spill_concurrencyLimited_localUpToSoft_thenZoneB_thenLeastLoadedUnderHard() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 42).targets(a(1), a(2), b(3), b(4)).localZone("a")
        .strategy(Strategy.concurrencyLimited(2, 3, java.time.Duration.ZERO)).build();
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 12; i++) {
      held.add(name(lb.pick().target()));
    }
    assertThat(held.subList(0, 4)).containsExactlyInAnyOrder("1", "1", "2", "2");
    assertThat(held.subList(4, 8)).containsExactlyInAnyOrder("3", "3", "4", "4");
    assertThat(held).containsExactly("1", "2", "1", "2", "4", "4", "3", "3", "2", "1", "4", "3");
  }

  @Test
  void capacityIsWeight_aHeavyLocalTargetLost_keepsLocalHealthOverOverallHealth() throws Exception {
    // zone a: weights 3 + 1 (3 lost) -> 1/4 healthy; overall 5/8 healthy: a keeps (1/4) / (5/8) = 0.4.
    LoadBalancer lb = zoned(Strategy.weightedRoundRobin(), new MutableTargetSource(List.of(
        a(1).withWeight(3).withHealthy(false), a(2).withWeight(1), b(3).withWeight(2), b(4).withWeight(2))));
    assertThat(localShare(lb)).isCloseTo(0.4, within(1e-12));
    Map<String, Integer> c = counts(sequence(lb, 1000));
    assertThat(c).containsOnlyKeys("2", "3", "4").containsEntry("2", 416).containsEntry("3", 292)
        .containsEntry("4", 292);
  }

  @Test
  void slowStart_aWarmingLocalTargetCountsForItsWarmingWeight() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(a(1), b(3), b(4)));
    LoadBalancer lb = Fixtures.builder(ticker, 42).targets(source).strategy(Strategy.roundRobin()).localZone("a")
        .slowStart(java.time.Duration.ofSeconds(10)).build();
    assertThat(localShare(lb)).as("a: 1 of 1 healthy, like the fleet").isEqualTo(1.0);
    source.add(a(2)); // joins warming at 10% of its weight: a holds 110 of 200, the fleet 310 of 400
    assertThat(localShare(lb)).isCloseTo((110.0 / 200) / (310.0 / 400), within(1e-12));
  }

  // ------------------------------------------------------------------ loss and recovery

  @Test
  void localZoneLosesHalf_spillStartsAtTheRebuild_andRecoveryStepsBackAfterASecond() throws Exception {
    MutableTargetSource source = new MutableTargetSource(fleet(0));
    LoadBalancer lb = zoned(Strategy.roundRobin(), source);
    assertThat(counts(sequence(lb, 300))).containsOnlyKeys("1", "2").containsEntry("1", 150).containsEntry("2", 150);

    source.set(fleet(1)); // the very next pick already spills
    assertThat(localShare(lb)).isCloseTo(2.0 / 3, within(1e-12));
    assertThat(counts(sequence(lb, 300))).containsOnlyKeys("2", "3", "4").containsEntry("2", 183)
        .containsEntry("3", 58).containsEntry("4", 59);

    ticker.advanceMillis(5000);
    source.set(fleet(0)); // back, after the share held for over a second: one step of 0.1 at once
    assertThat(localShare(lb)).isCloseTo(2.0 / 3 + 0.1, within(1e-12));
    assertThat(lb.published().reviewAtNanos).isEqualTo(ticker.read() + 1_000_000_000L);
    assertThat(counts(sequence(lb, 300))).containsEntry("1", 118).containsEntry("2", 118).containsEntry("3", 32)
        .containsEntry("4", 32);
    ticker.advanceMillis(999);
    sequence(lb, 1);
    assertThat(localShare(lb)).as("not yet a second").isCloseTo(2.0 / 3 + 0.1, within(1e-12));

    List<Double> shares = new ArrayList<>();
    List<Map<String, Integer>> spread = new ArrayList<>();
    for (int step = 0; step < 4; step++) {
      ticker.advanceMillis(1000);
      sequence(lb, 1); // the first pick past the review time rebuilds
      shares.add(Math.round(localShare(lb) * 1e6) / 1e6);
      spread.add(counts(sequence(lb, 300)));
    }
    assertThat(shares).containsExactly(0.866667, 0.966667, 1.0, 1.0);
    assertThat(spread.get(0)).containsEntry("3", 19).containsEntry("4", 20);
    assertThat(spread.get(1)).containsEntry("3", 4).containsEntry("4", 4);
    assertThat(spread.get(2)).containsOnlyKeys("1", "2");
    assertThat(lb.published().reviewAtNanos).isEqualTo(Long.MAX_VALUE);
  }

  @Test
  void localZoneWhollyDown_everythingSpills_withoutPanic() throws Exception {
    LoadBalancer lb = zoned(Strategy.roundRobin(), new MutableTargetSource(fleet(2)));
    assertThat(lb.snapshot().panic).isFalse();
    assertThat(localShare(lb)).isEqualTo(0.0);
    assertThat(counts(sequence(lb, 100))).containsOnlyKeys("3", "4").containsEntry("3", 50).containsEntry("4", 50);
  }

  @Test
  void overallPanic_noZonePreference_picksGoEverywhere() throws Exception {
    LoadBalancer lb = zoned(Strategy.roundRobin(),
        new MutableTargetSource(List.of(a(1).withHealthy(false), a(2).withHealthy(false), b(3).withHealthy(false), b(4))));
    assertThat(lb.snapshot().panic).isTrue();
    assertThat(zoneSplit(lb)).isNull();
    assertThat(counts(sequence(lb, 400))).containsEntry("1", 100).containsEntry("2", 100).containsEntry("3", 100)
        .containsEntry("4", 100);
  }

  @Test
  void everyLocalTargetExcluded_theRetryCrossesToZoneB() throws Exception {
    LoadBalancer lb = zoned(Strategy.roundRobin(), new MutableTargetSource(fleet(0)));
    assertThat(localShare(lb)).isEqualTo(1.0);
    Pick p = lb.pick(null, java.util.Set.of(a(1), a(2)));
    assertThat(p.target().zone()).isEqualTo("b");
  }

  // ------------------------------------------------------------------ closeness by round-trip time

  static Target rtt(Target t, long millis) {
    return t.withRoundTripTime(java.time.Duration.ofMillis(millis));
  }

  @Test
  void concurrencyLimited_closestUnderSoft_isZoneThenRoundTripThenUnknownLast() throws Exception {
    // zone a: 1 at 3 ms, 2 at 1 ms; zone b: 3 unknown, 4 at 2 ms. Soft 1: each takes one in closeness order.
    LoadBalancer lb = Fixtures.builder(ticker, 42)
        .targets(rtt(a(1), 3), rtt(a(2), 1), b(3), rtt(b(4), 2)).localZone("a")
        .strategy(Strategy.concurrencyLimited(1, 2, java.time.Duration.ZERO)).build();
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      held.add(name(lb.pick().target()));
    }
    assertThat(held).containsExactly("2", "1", "4", "3");
  }

  @Test
  void concurrencyLimited_noZone_roundTripRanksBeforeLatency() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 7).targets(t(1), rtt(t(2), 9), rtt(t(3), 4))
        .strategy(Strategy.concurrencyLimited(1, 2, java.time.Duration.ZERO)).build();
    List<String> held = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      held.add(name(lb.pick().target()));
    }
    assertThat(held).containsExactly("3", "2", "1");
  }

  @Test
  void leastConnections_equalLoad_theCloserWins_unknownLast() throws Exception {
    for (long seed = 0; seed < 8; seed++) { // whatever the random start of the scan
      LoadBalancer lb = Fixtures.builder(ticker, seed).targets(t(1), rtt(t(2), 5), rtt(t(3), 2))
          .strategy(Strategy.leastConnections()).build();
      List<String> held = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        held.add(name(lb.pick().target())); // held: each pick raises the chosen one's load
      }
      assertThat(held).as("seed " + seed).containsExactly("3", "2", "1");
    }
  }

  @Test
  void powerOfTwoChoices_equalLoad_theCloserWins() throws Exception {
    for (long seed = 0; seed < 8; seed++) {
      LoadBalancer lb = Fixtures.builder(ticker, seed).targets(t(1), rtt(t(2), 5))
          .strategy(Strategy.powerOfTwoChoices()).build();
      List<String> seq = sequence(lb, 5); // completed at once: always equal load
      assertThat(seq).as("seed " + seed).containsExactly("2", "2", "2", "2", "2");
    }
  }

  // ------------------------------------------------------------------ the metric

  @Test
  void spillGauge_followsTheSnapshot_andExistsOnlyWithAZone() throws Exception {
    io.micrometer.core.instrument.simple.SimpleMeterRegistry registry =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    MutableTargetSource source = new MutableTargetSource(fleet(0));
    LoadBalancer lb = Fixtures.builder(ticker, 42).targets(source).strategy(Strategy.random()).localZone("a")
        .meterRegistry(registry).build();
    assertThat(registry.get("fairway.zone.spill").gauge().value()).isEqualTo(0.0);
    source.set(fleet(1));
    assertThat(registry.get("fairway.zone.spill").gauge().value()).isCloseTo(1.0 / 3, within(1e-12));
    lb.close();
    assertThat(registry.find("fairway.zone.spill").gauges()).isEmpty();

    io.micrometer.core.instrument.simple.SimpleMeterRegistry plain =
        new io.micrometer.core.instrument.simple.SimpleMeterRegistry();
    Fixtures.builder(ticker, 42).targets(a(1), b(3)).meterRegistry(plain).build();
    assertThat(plain.find("fairway.zone.spill").gauges()).isEmpty();
  }

  // ------------------------------------------------------------------ regressions

  /**
   * Found by ConcurrencyTest under churn with a zone: a zone side of one target, a key whose entry
   * on it went stale (a failure), and a newer snapshot clearing the target's pickable flag while the
   * old selector was still in use: key affinity refused its only target, so a pick with nothing
   * excluded failed with "all 2 available targets are excluded".
   */
  @Test
  void keyAffinity_onlyTargetOfItsSide_staleKey_newerSnapshotClearedItsFlag_isStillChosen() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 42).targets(a(1), b(3)).strategy(Strategy.keyAffinity())
        .passiveHealth(PassiveHealth.disabled()).localZone("a").build();
    Pick first = lb.pick("k");
    assertThat(name(first.target())).isEqualTo("1");
    first.failure(new java.io.IOException("reset")); // the key's entry is stale now
    Selector inUse = lb.published().selector;
    TrackedTarget one = ((PickHandle) first).tracked();
    one.pickable = false; // what a newer snapshot without it writes while this one is still read
    try {
      assertThat(inUse.select("k", null, ticker.read())).isSameAs(one);
    } finally {
      one.pickable = true;
    }
  }
}
