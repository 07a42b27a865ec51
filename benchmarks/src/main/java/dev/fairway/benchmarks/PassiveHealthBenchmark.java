package dev.fairway.benchmarks;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
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
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What passive health ({@code PassiveHealth.defaults()}: a Resilience4j breaker per target) adds to
 * {@code success()}: pick + success with the default passive health against the same with it
 * disabled, for round robin at 4 and 64 targets, on 1 and 2 threads.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PassiveHealthBenchmark {

  @Param({"round-robin"})
  public String strategy;

  @Param({"4", "64"})
  public int targets;

  @Param({"disabled", "defaults"})
  public String passiveHealth;

  LoadBalancer balancer;

  @Setup
  public void setUp() {
    balancer = FairwayState.balancer(strategy, targets, passiveHealth.equals("defaults"));
  }

  @TearDown
  public void tearDown() {
    balancer.close();
  }

  @Benchmark
  public Target pickSuccess() throws NoTargetAvailableException {
    Pick p = balancer.pick();
    p.success();
    return p.target();
  }

  @Benchmark
  @Threads(2)
  public Target pickSuccess_2t() throws NoTargetAvailableException {
    Pick p = balancer.pick();
    p.success();
    return p.target();
  }
}
