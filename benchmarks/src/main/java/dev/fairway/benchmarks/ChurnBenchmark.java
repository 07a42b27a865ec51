package dev.fairway.benchmarks;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.MutableTargetSource;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.PassiveHealth;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.Target;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
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
 * Picks while the membership churns. One thread picks (pick + release) as fast as it can while a
 * second thread keeps replacing the list through {@link MutableTargetSource#set}, alternating
 * between the full list and one where a tenth of the targets were swapped for new ones (instances
 * replaced in a rolling deploy). Compare {@code churn:pick} with {@code quiet} (the same pick with
 * nobody writing, same balancer shape) for what churn does to pick latency; {@code churn:replace}
 * is the cost of one replacement (validation, diff, snapshot and strategy rebuild) under load.
 *
 * <p>The replacing thread runs flat out, far more often than any real discovery source, so this is
 * the worst case. On a 2-core machine the two threads take both cores.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class ChurnBenchmark {

  @Param({"round-robin", "consistent-hash"})
  public String strategy;

  @Param({"64", "1024"})
  public int targets;

  MutableTargetSource source;
  LoadBalancer balancer;
  List<Target> full;
  List<Target> rolled;
  boolean keyed;
  boolean flip;

  @Setup
  public void setUp() {
    full = Fixtures.targets(targets);
    List<Target> r = new ArrayList<>(full);
    int swapped = Math.max(1, targets / 10);
    List<Target> fresh = Fixtures.targets(swapped, 1 << 20);
    for (int i = 0; i < swapped; i++) {
      r.set(i * (targets / swapped), fresh.get(i));
    }
    rolled = List.copyOf(r);
    source = new MutableTargetSource(full);
    balancer =
        LoadBalancer.builder("churn")
            .targets(source)
            .strategy(Strategy.named(strategy))
            .passiveHealth(PassiveHealth.disabled())
            .build();
    keyed = FairwayState.isKeyed(strategy);
    FairwayState.warm(balancer, strategy);
  }

  @TearDown
  public void tearDown() {
    balancer.close();
  }

  @Benchmark
  @Group("churn")
  @GroupThreads(1)
  public Target pick(KeyCursor keys) throws NoTargetAvailableException {
    return FairwayState.pickAndRelease(balancer, keyed ? keys.next() : null);
  }

  @Benchmark
  @Group("churn")
  @GroupThreads(1)
  public void replace() {
    flip = !flip;
    source.set(flip ? rolled : full);
  }

  @Benchmark
  @Group("quiet")
  @GroupThreads(1)
  public Target quietPick(KeyCursor keys) throws NoTargetAvailableException {
    return FairwayState.pickAndRelease(balancer, keyed ? keys.next() : null);
  }
}
