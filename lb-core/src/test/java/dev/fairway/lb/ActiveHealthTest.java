package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.pickable;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Active probes on real (short) intervals; every wait is bounded. */
class ActiveHealthTest {
  /** What the fake probe answers per target: "ok", "fail", "throw" or "hang". */
  final Map<Target, String> answers = new ConcurrentHashMap<>();
  final Map<Target, AtomicInteger> probes = new ConcurrentHashMap<>();
  LoadBalancer lb;

  final HealthProbe probe = target -> {
    probes.computeIfAbsent(target, k -> new AtomicInteger()).incrementAndGet();
    switch (answers.getOrDefault(target, "ok")) {
      case "fail": return false;
      case "throw": throw new IllegalStateException("probe blew up");
      case "hang": Thread.sleep(5_000); return true;
      default: return true;
    }
  };

  @AfterEach
  void close() {
    if (lb != null) {
      lb.close();
    }
  }

  LoadBalancer build(String service, ActiveHealth health, Target... targets) {
    lb = LoadBalancer.builder(service).targets(targets).strategy(Strategy.roundRobin()).activeHealth(health).build();
    return lb;
  }

  static void await(String what, BooleanSupplier condition) throws InterruptedException {
    long deadline = System.nanoTime() + 3_000_000_000L;
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting until " + what);
      }
      Thread.sleep(5);
    }
  }

  @Test
  void failingProbes_makeTheTargetUnhealthyAfterTheThreshold_andPassingOnesBringItBack() throws Exception {
    answers.put(t(1), "fail");
    build("active1", ActiveHealth.of(probe, Duration.ofMillis(20)).withUnhealthyThreshold(3), t(1), t(2));
    await("target 1 is unhealthy and out of the picks",
        () -> state(lb, t(1)) == TargetState.UNHEALTHY && !pickable(lb, t(1)));
    assertThat(probes.get(t(1)).get()).isGreaterThanOrEqualTo(3);
    assertThat(counts(sequence(lb, 10))).containsOnlyKeys("2");
    answers.put(t(1), "ok");
    await("target 1 is back in the picks", () -> state(lb, t(1)) == TargetState.HEALTHY && pickable(lb, t(1)));
    assertThat(counts(sequence(lb, 10))).containsOnlyKeys("1", "2");
  }

  @Test
  void aProbeThatThrows_countsAsFailed() throws Exception {
    answers.put(t(1), "throw");
    build("active2", ActiveHealth.of(probe, Duration.ofMillis(20)), t(1), t(2));
    await("target 1 is unhealthy", () -> state(lb, t(1)) == TargetState.UNHEALTHY);
  }

  @Test
  void aProbePastItsTimeout_countsAsFailed() throws Exception {
    answers.put(t(1), "hang");
    build("active3", ActiveHealth.of(probe, Duration.ofMillis(30)).withTimeout(Duration.ofMillis(40)), t(1), t(2));
    await("target 1 is unhealthy", () -> state(lb, t(1)) == TargetState.UNHEALTHY);
    assertThat(state(lb, t(2))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void aSingleFailedCheckBelowTheThreshold_changesNothing() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    HealthProbe flaky = target -> target.equals(t(2)) || calls.incrementAndGet() % 2 == 0; // fails every other check
    lb = LoadBalancer.builder("active4").targets(t(1), t(2)).strategy(Strategy.roundRobin())
        .activeHealth(ActiveHealth.of(flaky, Duration.ofMillis(15)).withUnhealthyThreshold(2)).build();
    await("ten checks of target 1", () -> calls.get() >= 10);
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void passingProbes_endAPassiveEjectionEarly_onceTheyHadSeenTheTargetDown() throws Exception {
    answers.put(t(1), "fail");
    build("active5", ActiveHealth.of(probe, Duration.ofMillis(20)), t(1), t(2));
    Pick p = lb.pick(null, java.util.Set.of(t(2)));
    p.failure(new java.net.ConnectException("refused")); // ejected for 10 s by passive health
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    await("two failed probes after the ejection", () -> probes.getOrDefault(t(1), new AtomicInteger()).get() >= 3);
    answers.put(t(1), "ok");
    long start = System.nanoTime();
    await("probes bring target 1 back", () -> state(lb, t(1)) != TargetState.EJECTED && pickable(lb, t(1)));
    assertThat(System.nanoTime() - start).isLessThan(5_000_000_000L);
    lb.pick(null, java.util.Set.of(t(2))).success(); // the trial call
    assertThat(state(lb, t(1))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void passingProbes_doNotEndAPassiveEjectionTheyNeverSawFail() throws Exception {
    build("active6", ActiveHealth.of(probe, Duration.ofMillis(20)), t(1), t(2));
    Pick p = lb.pick(null, java.util.Set.of(t(2)));
    p.failure(new java.net.ConnectException("refused")); // ejected for 10 s; the probes pass throughout
    await("five passed probes", () -> probes.getOrDefault(t(1), new AtomicInteger()).get() >= 5);
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    await("the ejection in the picks", () -> !pickable(lb, t(1)));
    assertThat(counts(sequence(lb, 6))).containsOnlyKeys("2");
  }

  @Test
  void probeTimeout_startsWhenTheProbeRuns_soTargetsQueuedBehindSlowOnesAreProbedNotFailed() throws Exception {
    // 10 hanging targets and 2 healthy ones, 8 probe threads: the healthy ones wait in the queue
    // behind hanging probes, and only a timeout counted from queueing would fail them unprobed.
    List<Target> all = new ArrayList<>();
    for (int i = 1; i <= 12; i++) {
      all.add(t(i));
      if (i <= 10) {
        answers.put(t(i), "hang");
      }
    }
    lb = LoadBalancer.builder("active6").targets(all.toArray(new Target[0])).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.disabled()).panicThreshold(0)
        .activeHealth(ActiveHealth.of(probe, Duration.ofMillis(200)).withTimeout(Duration.ofMillis(100))
            .withUnhealthyThreshold(1).withHealthyThreshold(100).withJitter(0))
        .build();
    await("the hanging targets are unhealthy",
        () -> all.subList(0, 10).stream().allMatch(t -> state(lb, t) == TargetState.UNHEALTHY));
    await("both healthy targets were probed", () -> probes.containsKey(t(11)) && probes.containsKey(t(12)));
    assertThat(state(lb, t(11))).isEqualTo(TargetState.HEALTHY);
    assertThat(state(lb, t(12))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void close_leavesNoHealthThreadBehind() throws Exception {
    build("active-close", ActiveHealth.of(probe, Duration.ofMillis(10)), t(1), t(2));
    await("a probe ran", () -> probes.containsKey(t(1)));
    assertThat(threadsNamed("fairway-health-active-close")).isPositive();
    lb.close();
    await("no health thread left", () -> threadsNamed("fairway-health-active-close") == 0);
  }

  static long threadsNamed(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.getName().startsWith(prefix) && t.isAlive()).count();
  }

  @Test
  void withASubset_onlyTheWindowIsProbed() throws Exception {
    List<Target> seven = Fixtures.targets(7);
    List<Target> ring = SubsetTest.ring(seven);
    lb = LoadBalancer.builder("active-subset").targets(seven.toArray(new Target[0])).strategy(Strategy.roundRobin())
        .subset(Subset.of(3, PeerCoordinate.fixed(0, 3)).withFloor(1))
        .activeHealth(ActiveHealth.of(probe, Duration.ofMillis(20))).build();
    // the window is ranks 0..4 (SubsetTest): each probed twice, and ranks 5 and 6 never
    await("the window probed twice", () -> ring.subList(0, 5).stream()
        .allMatch(t -> probes.containsKey(t) && probes.get(t).get() >= 2));
    assertThat(probes).doesNotContainKeys(ring.get(5), ring.get(6));
  }
}
