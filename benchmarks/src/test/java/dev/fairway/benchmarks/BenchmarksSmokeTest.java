package dev.fairway.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/**
 * Keeps the benchmarks compiling and working. Runs a few of them in-process through the JMH Runner
 * for one 100 ms iteration each and checks that each produced a score, and builds every peer's
 * chooser once. Asserts no timing (tests are not benchmarks); the numbers come from
 * {@code java -jar benchmarks/target/benchmarks.jar}.
 */
class BenchmarksSmokeTest {
  static {
    // JMH refuses to start while another JMH process holds /tmp/jmh.lock (read once, when Runner
    // is first initialised): on a shared machine someone's real benchmark run would fail this smoke
    // test, which measures nothing. Ignoring the lock only here leaves real runs guarded.
    System.setProperty("jmh.ignoreLock", "true");
  }

  private static Options tiny(String include) {
    return new OptionsBuilder()
        .include(include)
        .forks(0) // in-process: the test JVM runs the benchmark code directly
        .warmupIterations(0)
        .measurementIterations(1)
        .measurementTime(TimeValue.milliseconds(100))
        .timeUnit(TimeUnit.NANOSECONDS)
        .shouldFailOnError(true)
        .build();
  }

  @Test
  void pickBenchmark_runsThroughJmh() throws Exception {
    Options options = new OptionsBuilder()
        .parent(tiny(PickBenchmark.class.getName() + "\\.pick$|" + PickFloorBenchmark.class.getName() + "\\.floor$"))
        .param("strategy", "round-robin", "consistent-hash")
        .param("targets", "4")
        .build();
    Collection<RunResult> results = new Runner(options).run();
    assertThat(results).hasSize(3);
    assertThat(results).allSatisfy(r -> assertThat(r.getPrimaryResult().getScore()).isPositive());
  }

  @Test
  void zonePickBenchmark_runsThroughJmh_andItsSpillCaseReallySpills() throws Exception {
    Options options = new OptionsBuilder()
        .parent(tiny(ZonePickBenchmark.class.getName() + "\\.pick$"))
        .param("strategy", "round-robin", "consistent-hash")
        .param("targets", "4")
        .param("zone", "spill")
        .build();
    Collection<RunResult> results = new Runner(options).run();
    assertThat(results).hasSize(2);
    assertThat(results).allSatisfy(r -> assertThat(r.getPrimaryResult().getScore()).isPositive());
    try (dev.fairway.lb.LoadBalancer lb = FairwayState.zonedBalancer("random", 4, true)) {
      java.util.Set<String> zones = new java.util.HashSet<>();
      for (int i = 0; i < 100; i++) {
        zones.add(FairwayState.pickAndRelease(lb, null).zone());
      }
      assertThat(zones).containsExactlyInAnyOrder("a", "b");
    }
    try (dev.fairway.lb.LoadBalancer lb = FairwayState.zonedBalancer("random", 4, false)) {
      for (int i = 0; i < 100; i++) {
        assertThat(FairwayState.pickAndRelease(lb, null).zone()).isEqualTo("a");
      }
    }
  }

  @Test
  void peerAndRebuildBenchmarks_runThroughJmh() throws Exception {
    Options options = new OptionsBuilder()
        .parent(tiny(PeerBenchmark.class.getName() + "\\.pick$|" + RebuildBenchmark.class.getName()))
        .param("balancer", "dubbo-consistent-hash", "armeria-weighted-round-robin")
        .param("strategy", "consistent-hash")
        .param("targets", "10")
        .build();
    Collection<RunResult> results = new Runner(options).run();
    assertThat(results).hasSize(3);
    assertThat(results).allSatisfy(r -> assertThat(r.getPrimaryResult().getScore()).isPositive());
  }

  @Test
  void httpClient5Benchmark_runsThroughJmh_andItsCallsReachTheTargets() throws Exception {
    Options options = new OptionsBuilder()
        .parent(tiny(HttpClient5Benchmark.class.getName() + "\\.(plain|balanced)(Get|NoNetwork)$"))
        .build();
    Collection<RunResult> results = new Runner(options).run();
    assertThat(results).hasSize(4);
    assertThat(results).allSatisfy(r -> assertThat(r.getPrimaryResult().getScore()).isPositive());
    HttpClient5Benchmark benchmark = new HttpClient5Benchmark();
    benchmark.setUp(); // 200 calls through each client: fails on any status but 200, or a call not balanced
    try {
      assertThat(benchmark.balancedNoNetwork()).isEqualTo(2);
      assertThat(benchmark.balancedGet()).isEqualTo(2);
      assertThat(benchmark.balancer.status()).allSatisfy(s -> assertThat(s.inFlight()).isZero());
    } finally {
      benchmark.tearDown();
    }
  }

  @Test
  void everyBalancerInPeerBenchmark_returnsTargets() throws Exception {
    // Peers.create picks 1,000 times and fails on the first null: a peer set up wrongly would
    // otherwise measure an early return.
    String[] names = PeerBenchmark.class.getField("balancer").getAnnotation(org.openjdk.jmh.annotations.Param.class).value();
    assertThat(names).hasSize(15);
    for (String name : names) {
      try (Peers.Chooser chooser = Peers.create(name, 4)) {
        assertThat(chooser.choose(0, Fixtures.zipfKeys(7))).as(name).isNotNull();
      }
    }
  }
}
