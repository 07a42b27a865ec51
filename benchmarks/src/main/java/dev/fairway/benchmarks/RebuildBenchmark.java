package dev.fairway.benchmarks;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.List;
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
 * Snapshot rebuild time: one {@link MutableTargetSource#set} with a subscribed balancer, which
 * rebuilds synchronously on the calling thread. Each operation swaps one target for another (an
 * instance replaced), so membership changes every time: the source validates and diffs the list,
 * the balancer tracks the newcomer (a new circuit breaker with the default passive health), builds
 * the snapshot, and the strategy builds its structures; for consistent-hash that is the whole ring
 * (up to 1,000 virtual nodes per target, about 65,536 points in all), for weighted-round-robin the
 * whole schedule.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 300, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 6, time = 200, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class RebuildBenchmark {

  @Param({"round-robin", "weighted-round-robin", "consistent-hash"})
  public String strategy;

  @Param({"10", "1000", "10000"})
  public int targets;

  MutableTargetSource source;
  LoadBalancer balancer;
  List<Target> a;
  List<Target> b;
  boolean flip;

  @Setup
  public void setUp() {
    a = Fixtures.targets(targets);
    List<Target> other = new ArrayList<>(a);
    other.set(targets / 2, Fixtures.targets(1, 1 << 20).get(0));
    b = List.copyOf(other);
    source = new MutableTargetSource(a);
    balancer =
        LoadBalancer.builder("rebuild")
            .targets(source)
            .strategy(Strategy.named(strategy))
            .passiveHealth(PassiveHealth.defaults())
            .build();
  }

  @TearDown
  public void tearDown() {
    balancer.close();
  }

  @Benchmark
  public LoadBalancer set() {
    flip = !flip;
    source.set(flip ? b : a);
    return balancer;
  }
}
