package dev.fairway.benchmarks;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.PeerCoordinate;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Subset;
import dev.fairway.lb.Target;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of one pick (then {@code release()}, as {@link PickBenchmark#pick}) with a subset and
 * without, over the same targets, in one run (issue 24: within 10%). The subset is a window of 12
 * for peer 7 of 100: over 64 targets it holds 13 or 14 of them (two with fractional weights), over
 * 1,024 targets 21 or 22. Passive health disabled, as in {@link PickBenchmark}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class SubsetPickBenchmark {

  @Param({"least-queueing", "round-robin", "power-of-two-choices"})
  public String strategy;

  @Param({"64", "1024"})
  public int targets;

  @Param({"off", "on"})
  public String subset;

  LoadBalancer balancer;

  @Setup
  public void setUp() {
    LoadBalancer.Builder b = LoadBalancer.builder("bench")
        .targets(Fixtures.targets(targets).toArray(new Target[0]))
        .strategy(Strategy.named(strategy))
        .passiveHealth(PassiveHealth.disabled());
    if (subset.equals("on")) {
      b.subset(Subset.of(12, PeerCoordinate.fixed(7, 100)));
    }
    balancer = b.build();
    FairwayState.warm(balancer, strategy);
  }

  @TearDown
  public void tearDown() {
    balancer.close();
  }

  @Benchmark
  public Target pick() throws NoTargetAvailableException {
    return FairwayState.pickAndRelease(balancer, null);
  }
}
