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
import org.openjdk.jmh.annotations.Warmup;

/**
 * {@link PickBenchmark}'s {@code pick} and {@code pickSuccess} with zone-aware routing on
 * ({@code localZone("a")}, half the targets in zone a): {@code zone=local} while zone a is whole
 * (every call stays local: one branch more than {@link PickBenchmark}), {@code zone=spill} while it
 * has lost half its targets (one more random draw, or one key hash, per pick). Compare with
 * PickBenchmark at the same strategy and target count for the cost of the zone layer; PickBenchmark
 * itself has no zone set, and its balancer is exactly the strategy's.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ZonePickBenchmark {

  @Param({
    "round-robin",
    "weighted-round-robin",
    "random",
    "least-connections",
    "power-of-two-choices",
    "key-affinity",
    "consistent-hash",
    "least-response-time",
    "concurrency-limited"
  })
  public String strategy;

  @Param({"4", "64"})
  public int targets;

  @Param({"local", "spill"})
  public String zone;

  LoadBalancer balancer;
  boolean keyed;

  @Setup
  public void setUp() {
    balancer = FairwayState.zonedBalancer(strategy, targets, zone.equals("spill"));
    keyed = FairwayState.isKeyed(strategy);
  }

  @TearDown
  public void tearDown() {
    balancer.close();
  }

  @Benchmark
  public Target pick(KeyCursor keys) throws NoTargetAvailableException {
    return FairwayState.pickAndRelease(balancer, keyed ? keys.next() : null);
  }

  @Benchmark
  public Target pickSuccess(KeyCursor keys) throws NoTargetAvailableException {
    Pick p = balancer.pick(keyed ? keys.next() : null);
    p.success();
    return p.target();
  }
}
