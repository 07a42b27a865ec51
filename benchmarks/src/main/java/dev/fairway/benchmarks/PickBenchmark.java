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
 * The cost of one pick for every strategy, with passive health disabled (so the numbers are the
 * strategy and the balancer, not Resilience4j).
 *
 * <ul>
 *   <li>{@code pick}: {@code pick(key)} then {@code release()}. A pick takes an in-flight slot, so
 *       "the pick alone" must still give it back or the counts would grow without bound (and
 *       concurrency-limited would run out of slots); {@code release()} is the cheapest completion:
 *       one CAS on the handle and one atomic decrement, no clock read and no latency update.
 *   <li>{@code pickSuccess}: {@code pick(key)} then {@code success()}: the whole hold, including the
 *       second clock read and the latency average update.
 * </ul>
 *
 * <p>Keys (only for key-affinity and consistent-hash; the others get {@code null}) come from a
 * per-thread Zipf-distributed array. The {@code _2t} variants run the same operation on 2 threads
 * against one shared balancer.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@Fork(value = 2, jvmArgsAppend = {"-Xms1g", "-Xmx1g", "-Xmn128m"})
@Warmup(iterations = 2, time = 250, timeUnit = TimeUnit.MILLISECONDS)
@Measurement(iterations = 8, time = 100, timeUnit = TimeUnit.MILLISECONDS)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
public class PickBenchmark {

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

  @Param({"4", "64", "1024"})
  public int targets;

  LoadBalancer balancer;
  boolean keyed;

  @Setup
  public void setUp() {
    balancer = FairwayState.balancer(strategy, targets, false);
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
  @Threads(2)
  public Target pick_2t(KeyCursor keys) throws NoTargetAvailableException {
    return FairwayState.pickAndRelease(balancer, keyed ? keys.next() : null);
  }

  @Benchmark
  public Target pickSuccess(KeyCursor keys) throws NoTargetAvailableException {
    Pick p = balancer.pick(keyed ? keys.next() : null);
    p.success();
    return p.target();
  }

  @Benchmark
  @Threads(2)
  public Target pickSuccess_2t(KeyCursor keys) throws NoTargetAvailableException {
    Pick p = balancer.pick(keyed ? keys.next() : null);
    p.success();
    return p.target();
  }

  /**
   * A call that carries a load report, as every call does behind a server that sends them: the
   * pick (which reads the targets' fresh reports as far as the trust model believes them), the
   * report (judged on the report path) and the success. Every target's reports are fresh throughout,
   * since each call refreshes its target's.
   */
  @Benchmark
  public Target pickReportSuccess(KeyCursor keys) throws NoTargetAvailableException {
    Pick p = balancer.pick(keyed ? keys.next() : null);
    p.reportLoad(0.5, 4);
    p.success();
    return p.target();
  }
}
